// Types of the package entry (index.js): the native addon's, generated from the
// Rust doc comments into native.d.ts, plus those of the JavaScript parts.
export * from './native'
