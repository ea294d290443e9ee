#!/usr/bin/env node
// `prepack`: a plain `npm pack` or `npm publish` of the repository would make a
// package with no binary and no platform packages, which installs and then fails
// on require(). The packages are made by `npm run pack:all` (its own `npm pack`
// runs without scripts). A dry run (`npm pack --dry-run`, to see what would be
// packed) writes nothing, so it is let through.
'use strict'

if (process.env.npm_config_dry_run === 'true') process.exit(0)

console.error(`captcha-error-budget: refusing a plain \`npm ${process.env.npm_command || 'pack'}\` of the repository.
Its tarball would hold no native binary and name no platform package, so it would install and then fail on require().
Make the packages with:
  npm run build && npm run artifacts && npm run pack:all
which writes dist/*.tgz: the main package (listing the platform packages as optional dependencies) and one per platform;
publish the platform packages first, then the main one (docs/building-targets.md).
To install a build of this machine's platform only (not published): npm run pack:host, then
  npm install <the two dist/*.tgz files>
(docs/platforms.md).`)
process.exit(1)
