#!/usr/bin/env node
// The `keel` command: registers tsx so the TypeScript sources run as they are.
require('tsx/cjs');
require('./keel.ts');
