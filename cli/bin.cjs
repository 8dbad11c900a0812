#!/usr/bin/env node
// The `keel` command. Installed as a package (or in the image) it runs the build,
// dist/cli/keel.js; in a checkout, where the sources are, it runs them through tsx, so `npx keel`
// there never runs a stale build (docs/decisions/0350).
const { existsSync } = require('node:fs');
const path = require('node:path');

const source = path.join(__dirname, 'keel.ts');
if (existsSync(source)) {
  require('tsx/cjs');
  require(source);
} else {
  require('../dist/cli/keel.js');
}
