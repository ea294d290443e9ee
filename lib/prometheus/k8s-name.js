'use strict'
// Kubernetes object names (RFC 1123 subdomains), for a PrometheusRule's metadata.name:
// at most 253 characters, dot-separated labels of 1–63 lower-case letters, digits and
// '-', each starting and ending with a letter or digit. Kubernetes refuses anything else.

const MAX_NAME = 253
const MAX_LABEL = 63
const LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/

/** Whether `name` is a name Kubernetes takes for an object. */
function isObjectName(name) {
  return typeof name === 'string' && name.length <= MAX_NAME && name.split('.').every((label) => LABEL.test(label))
}

// One label of `text`: letters without their accents (é → e), lower case, each run of
// other characters one '-', no '-' at either end, at most 63 characters ('' when nothing is left).
function labelOf(text) {
  const plain = text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
  return plain
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, MAX_LABEL)
    .replace(/-+$/, '')
}

/**
 * The name made of `text` (an SLO id, prefixed): each dot-separated part a label (empty
 * ones left out), cut to 253 characters at most; '' when no character of it can stand in a name.
 */
function objectNameOf(text) {
  const name = text.split('.').map(labelOf).filter(Boolean).join('.')
  return name.length <= MAX_NAME ? name : name.slice(0, MAX_NAME).replace(/[-.]+$/, '')
}

module.exports = { isObjectName, objectNameOf }
