'use strict'
// The provider profiles: what each provider's error codes mean for an error
// budget. The same code means different things per provider (ERROR_ZERO_BALANCE
// is an unpaid account at 2Captcha but "no free threads" at CaptchaAI), so the
// outcome is read from the provider's own table, never from the code alone.
//
// Each row: code → [outcome, reason, back-off ms (the provider's published wait
// before the next request; 0: none published)]. Outcomes (lib/guard/outcomes.js):
// 'failure' — the solver's unreliability, counts against the SLO; 'excluded' —
// the caller's or the account's problem, counted apart; 'capacity' — no worker,
// thread or slot free now, counted apart and paces the guard. A code missing
// from the table counts as a failure (lib/guard/classify.js warns once per code).
// docs/providers.md renders this table; __test__/guard/providers.spec.js checks it.
//
// `reportBad`: where a bad answer is reported (createSolver({ reportBad: true })):
// `endpoints` maps a task type (a trailing `*` matches any rest, case aside; the
// first that matches wins; in.php tasks have none, so only '*' matches them) to
// the res.php action (in.php providers) or the createTask API's method; a type
// none matches is not reported. `withinMs`: the provider's published age limit of
// a report (null: none published); `maxShare`: the most of the recent solves
// reported (2Captcha refuses reports over 40 %: kept below, at 35 %, for all).

const SECOND = 1000
const MINUTE = 60 * SECOND
const REPORT_SHARE = 0.35

// The in.php / res.php codes CaptchaAI and 2Captcha share the meaning of.
const IN_PHP_CALLER = {
  ERROR_WRONG_USER_KEY: ['excluded', 'the API key is malformed', 0],
  ERROR_KEY_DOES_NOT_EXIST: ['excluded', 'the API key does not exist', 0],
  ERROR_PAGEURL: ['excluded', 'the task has no pageurl', 0],
  ERROR_GOOGLEKEY: ['excluded', 'the sitekey is missing or malformed', 0],
  ERROR_WRONG_GOOGLEKEY: ['excluded', 'the sitekey is malformed', 0],
  ERROR_BAD_TOKEN_OR_PAGEURL: ['excluded', 'the sitekey and pageurl do not match', 0],
  ERROR_DOMAIN_NOT_ALLOWED: ['excluded', 'the site is not served to this account', 0],
  ERROR_EMPTY_ACTION: ['excluded', 'the task needs an action and has none', 0],
  ERROR_TOKEN_EXPIRED: ['excluded', 'the challenge the task sent has expired', 0],
  ERROR_IP_ADDRES: ['excluded', "the pingback IP address is not the account's", 0],
  ERROR_NO_SUCH_METHOD: ['excluded', 'the method is not known', 0],
  ERROR_BAD_PARAMETERS: ['excluded', 'a parameter is missing or malformed', 0],
  ERROR_ZERO_CAPTCHA_FILESIZE: ['excluded', 'the image is empty', 0],
  ERROR_TOO_BIG_CAPTCHA_FILESIZE: ['excluded', 'the image is too large', 0],
  ERROR_WRONG_FILE_EXTENSION: ['excluded', 'the image has an unsupported extension', 0],
  ERROR_IMAGE_TYPE_NOT_SUPPORTED: ['excluded', 'the image type is not recognised', 0],
  ERROR_UPLOAD: ['excluded', 'the image upload is malformed', 0],
  ERROR_CAPTCHAIMAGE_BLOCKED: ['excluded', 'the image is on the blocked list', 0],
  ERROR_IP_NOT_ALLOWED: ['excluded', "the request's IP is not on the account's list", 0],
  IP_BANNED: ['excluded', 'the IP is banned after repeated bad requests', 5 * MINUTE],
  ERROR_IP_BANNED: ['excluded', 'the IP is banned after repeated bad requests', 5 * MINUTE],
  ERROR_BAD_PROXY: ['excluded', 'the proxy the task sent is unusable', 0],
  ERROR_PROXY_CONNECTION_FAILED: ['excluded', 'the proxy the task sent could not be reached', 0],
  ERROR_TOO_MUCH_REQUESTS: ['excluded', 'the account sends too many requests', 10 * SECOND],
  MAX_USER_TURN: ['excluded', 'too many in.php requests: the account is paused', 10 * SECOND],
  'ERROR: 1001': ['excluded', 'banned for 10 minutes after too many NO_SLOT answers', 10 * MINUTE],
  'ERROR: 1002': ['excluded', 'banned for 5 minutes after too many ZERO_BALANCE answers', 5 * MINUTE],
  'ERROR: 1003': ['excluded', 'banned for 30 s after polling too often', 30 * SECOND],
  'ERROR: 1004': ['excluded', 'the IP is banned for 10 minutes', 10 * MINUTE],
  'ERROR: 1005': ['excluded', 'banned for 5 minutes after too many requests', 5 * MINUTE],
  ERROR_CAPTCHA_UNSOLVABLE: ['failure', 'the workers could not solve it', 0],
  ERROR_BAD_DUPLICATES: ['failure', 'the workers did not agree on an answer', 0],
  ERROR_WRONG_CAPTCHA_ID: ['failure', 'the service lost a task id it gave', 0],
  ERROR_WRONG_ID_FORMAT: ['failure', 'the service answered with an id it does not know', 0],
}

// The createTask / getTaskResult codes Anti-Captcha and CapMonster share the meaning of.
const CREATE_TASK_CALLER = {
  ERROR_KEY_DOES_NOT_EXIST: ['excluded', 'the API key does not exist', 0],
  ERROR_ZERO_CAPTCHA_FILESIZE: ['excluded', 'the image is empty', 0],
  ERROR_TOO_BIG_CAPTCHA_FILESIZE: ['excluded', 'the image is too large', 0],
  ERROR_ZERO_BALANCE: ['excluded', 'the account has no funds', 0],
  ERROR_IP_NOT_ALLOWED: ['excluded', "the request's IP is not on the account's list", 0],
  ERROR_NO_SUCH_METHOD: ['excluded', 'the API method is not known', 0],
  ERROR_IMAGE_TYPE_NOT_SUPPORTED: ['excluded', 'the image type is not recognised', 0],
  ERROR_IP_BLOCKED: ['excluded', 'the IP is blocked after bad requests', 0],
  ERROR_TASK_ABSENT: ['excluded', 'the request has no task', 0],
  ERROR_TASK_NOT_SUPPORTED: ['excluded', 'the task type is not supported', 0],
  ERROR_RECAPTCHA_INVALID_SITEKEY: ['excluded', 'the sitekey is invalid', 0],
  ERROR_RECAPTCHA_INVALID_DOMAIN: ['excluded', 'the sitekey is not valid for this domain', 0],
  ERROR_TOKEN_EXPIRED: ['excluded', 'the challenge the task sent has expired', 0],
  ERROR_PROXY_CONNECT_REFUSED: ['excluded', 'the proxy the task sent refused the connection', 0],
  ERROR_PROXY_CONNECT_TIMEOUT: ['excluded', 'the proxy the task sent timed out', 0],
  ERROR_PROXY_READ_TIMEOUT: ['excluded', 'the proxy the task sent timed out', 0],
  ERROR_PROXY_BANNED: ['excluded', 'the proxy the task sent is banned by the site', 0],
  ERROR_PROXY_TRANSPARENT: ['excluded', 'the proxy the task sent is transparent', 0],
  ERROR_CAPTCHA_UNSOLVABLE: ['failure', 'the workers could not solve it', 0],
  ERROR_BAD_DUPLICATES: ['failure', 'the workers did not agree on an answer', 0],
  ERROR_NO_SUCH_CAPCHA_ID: ['failure', 'the service lost a task id it gave', 0],
  ERROR_RECAPTCHA_TIMEOUT: ['failure', "the worker's solve timed out", 0],
}

/** The profiles by the name `provider` options take. */
const PROVIDERS = {
  captchaai: {
    title: 'CaptchaAI',
    protocol: 'in.php',
    baseUrl: 'https://ocr.captchaai.com',
    doc: 'https://captchaai.com/api-docs',
    reportBad: { endpoints: { '*': 'reportbad' }, withinMs: 15 * MINUTE, maxShare: REPORT_SHARE },
    codes: {
      ...IN_PHP_CALLER,
      ERROR_ZERO_BALANCE: ['capacity', 'every thread of the plan is busy ("NO AVAILABLE THREADS")', 5 * SECOND],
      ERROR_NO_SLOT_AVAILABLE: ['capacity', 'no worker is free now', 5 * SECOND],
    },
  },
  '2captcha': {
    title: '2Captcha',
    protocol: 'in.php',
    baseUrl: 'https://2captcha.com',
    doc: 'https://2captcha.com/2captcha-api#error_handling',
    // ERROR_REPORT_NOT_RECORDED: over 40 % of recent solves reported, or a solve older than 15 minutes.
    reportBad: { endpoints: { '*': 'reportbad' }, withinMs: 15 * MINUTE, maxShare: REPORT_SHARE },
    // "about 20 res.php requests per task": more, and ERROR: 1003 bans the key for a while.
    maxPolls: 20,
    codes: {
      ...IN_PHP_CALLER,
      ERROR_ZERO_BALANCE: ['excluded', 'the account has no funds', 60 * SECOND],
      ERROR_NO_SLOT_AVAILABLE: ['capacity', 'the bid is below the current rate or the queue is too long', 5 * SECOND],
    },
  },
  anticaptcha: {
    title: 'Anti-Captcha',
    protocol: 'createTask',
    baseUrl: 'https://api.anti-captcha.com',
    doc: 'https://anti-captcha.com/apidoc/errors',
    // Reports within 60 s of the task's completion, one per task; images, reCAPTCHA and hCaptcha only.
    reportBad: {
      endpoints: { 'ImageToText*': 'reportIncorrectImageCaptcha', 'Recaptcha*': 'reportIncorrectRecaptcha', 'HCaptcha*': 'reportIncorrectHcaptcha' },
      withinMs: 60 * SECOND,
      maxShare: REPORT_SHARE,
    },
    codes: {
      ...CREATE_TASK_CALLER,
      ERROR_NO_SLOT_AVAILABLE: ['capacity', 'no idle worker is available now', 5 * SECOND],
    },
  },
  capsolver: {
    title: 'CapSolver',
    protocol: 'createTask',
    baseUrl: 'https://api.capsolver.com',
    doc: 'https://docs.capsolver.com/en/guide/api-error/',
    // feedbackTask with result.invalid: true, for any task type.
    reportBad: { endpoints: { '*': 'feedbackTask' }, withinMs: null, maxShare: REPORT_SHARE },
    codes: {
      ERROR_KEY_DENIED_ACCESS: ['excluded', 'the API key is wrong or denied', 0],
      ERROR_ZERO_BALANCE: ['excluded', 'the account has no funds', 60 * SECOND],
      ERROR_INVALID_TASK_DATA: ['excluded', 'the task data is malformed', 0],
      ERROR_BAD_REQUEST: ['excluded', 'the request is malformed', 0],
      ERROR_TASK_NOT_SUPPORTED: ['excluded', 'the task type is not supported', 0],
      ERROR_PROXY_BANNED: ['excluded', 'the proxy the task sent is banned', 0],
      ERROR_INVALID_IMAGE: ['excluded', 'the image is unusable', 0],
      ERROR_IP_BANNED: ['excluded', 'the IP is banned after bad requests', 10 * MINUTE],
      ERROR_KEY_TEMP_BLOCKED: ['excluded', 'the key is blocked for a while after bad requests', 5 * MINUTE],
      ERROR_SERVICE_UNAVALIABLE: ['capacity', 'the service has no capacity now', 5 * SECOND],
      ERROR_RATE_LIMIT: ['capacity', "the account's rate limit is reached", 5 * SECOND],
      ERROR_CAPTCHA_UNSOLVABLE: ['failure', 'the workers could not solve it', 0],
      ERROR_TASK_TIMEOUT: ['failure', 'the task timed out at the service', 0],
      ERROR_TASKID_INVALID: ['failure', 'the service lost a task id it gave', 0],
    },
  },
  capmonster: {
    title: 'CapMonster Cloud',
    protocol: 'createTask',
    baseUrl: 'https://api.capmonster.cloud',
    doc: 'https://docs.capmonster.cloud/docs/api/api-errors',
    reportBad: { endpoints: { 'ImageToText*': 'reportIncorrectImageCaptcha', '*': 'reportIncorrectTokenCaptcha' }, withinMs: null, maxShare: REPORT_SHARE },
    codes: {
      ...CREATE_TASK_CALLER,
      ERROR_DOMAIN_NOT_ALLOWED: ['excluded', 'the site is not served', 0],
      ERROR_TOO_MUCH_REQUESTS: ['excluded', 'the account sends too many requests', 10 * SECOND],
      ERROR_IP_BANNED: ['excluded', 'the IP is banned after bad requests', 10 * MINUTE],
      ERROR_NO_SLOT_AVAILABLE: ['capacity', 'no worker is free now', 5 * SECOND],
      WRONG_CAPTCHA_ID: ['failure', 'the service lost a task id it gave', 0],
    },
  },
}
for (const profile of Object.values(PROVIDERS)) {
  Object.freeze(profile.reportBad.endpoints)
  Object.freeze(profile.reportBad)
  for (const row of Object.values(profile.codes)) Object.freeze(row)
  Object.freeze(profile.codes)
  Object.freeze(profile)
}
Object.freeze(PROVIDERS)

/** The names `provider` options take, in the table's order. */
const PROVIDER_NAMES = Object.freeze(Object.keys(PROVIDERS))

/**
 * What `code` means at `provider`: `{ outcome, reason, backoffMs }`, or null
 * when the profile does not list it.
 */
function meaning(provider, code) {
  const row = Object.hasOwn(PROVIDERS[provider].codes, code) ? PROVIDERS[provider].codes[code] : undefined
  if (row === undefined) return null
  return { outcome: row[0], reason: row[1], backoffMs: row[2] }
}

module.exports = { PROVIDERS, PROVIDER_NAMES, meaning }
