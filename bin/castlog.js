#!/usr/bin/env node
'use strict';

const path = require('node:path');

const entry = path.join(__dirname, '..', 'dist', 'apps', 'cli', 'src', 'main.js');

let cli;
try {
  cli = require(entry);
} catch (error) {
  if (error && error.code === 'MODULE_NOT_FOUND' && String(error.message).includes(entry)) {
    process.stderr.write(
      `castlog: the CLI is not built (${entry} is missing); run \`npm run build\` first\n`,
    );
    process.exit(1);
  }
  throw error;
}

cli.main(process.argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`castlog: ${error && error.message ? error.message : String(error)}\n`);
    process.exitCode = 1;
  },
);
