'use strict'
// Runs `node bin/captcha-budget.js gate …` as a child process with stdin closed;
// resolves to { code, stdout, stderr } (code: the exit code, 0 on success).
const { execFile } = require('node:child_process')
const path = require('node:path')

const CLI = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')

function gateCli(args) {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, 'gate', ...args], (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr })
    })
    child.stdin.end()
  })
}

module.exports = { gateCli }
