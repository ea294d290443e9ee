'use strict'
// A family child's labels as one line of text, `site=b\=x\,y,type=t`: what the gate
// prints and what `--labels` parses back (lib/cli/gate/), the escaping replay --by uses in
// its tracker names (lib/cli/replay/run.js), so that a printed child can be pasted into --labels.
const { printable } = require('./errors.js')

/** A label value in a name=value list: backslash, ',' and '=' escaped with a backslash, so that no two label sets read alike. */
const escapeValue = (value) => value.replace(/[\\,=]/g, '\\$&')

/**
 * `{ site: 'b=x,y', type: 't' }` → `site=b\=x\,y,type=t`, safe to print: the values
 * escaped as escapeValue() does, then the characters a terminal acts on as \uXXXX
 * (errors.printable()), so that a label value cannot forge a line of output.
 */
const labelText = (labels) =>
  printable(
    Object.entries(labels)
      .map(([name, value]) => `${name}=${escapeValue(value)}`)
      .join(','),
  )

// `\\`, `\,`, `\=` and printable()'s `\uXXXX` stand for one character; a backslash before anything else is itself.
const ESCAPE = /\\([\\,=]|u[0-9a-fA-F]{4})/y

/**
 * `type=turnstile,site=x` → { type: 'turnstile', site: 'x' }, reading labelText()'s
 * escapes back: a ',' or '=' after a backslash is the value's (a value may also hold a
 * bare '='). Throws on a part that is not name=value.
 */
function parseLabels(text) {
  const parts = [{ name: null, value: '' }]
  for (let i = 0; i < text.length; i++) {
    const part = parts[parts.length - 1]
    ESCAPE.lastIndex = i
    const escape = ESCAPE.exec(text)
    if (escape !== null) {
      const [, what] = escape
      part.value += what.length === 1 ? what : String.fromCharCode(parseInt(what.slice(1), 16))
      i += escape[0].length - 1
    } else if (text[i] === ',') {
      parts.push({ name: null, value: '' })
    } else if (text[i] === '=' && part.name === null) {
      part.name = part.value
      part.value = ''
    } else {
      part.value += text[i]
    }
  }
  const labels = {}
  for (const { name, value } of parts) {
    if (name === null || name.trim() === '') {
      throw new Error(`--labels must be name=value pairs separated by commas, e.g. type=turnstile,site=shop.example, got '${printable(text)}'`)
    }
    labels[name.trim()] = value.trim()
  }
  return labels
}

module.exports = { escapeValue, labelText, parseLabels }
