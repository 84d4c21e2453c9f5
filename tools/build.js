#!/usr/bin/env node
'use strict';

// Builds dist/ (tsc, then tsc-alias). With --if-stale it first compares the newest source file
// with the stamp the last successful build left, and builds only when a source is newer: even an
// incremental tsc spends seconds checking an unchanged program, and `npm start` or
// `npm run castlog` should not make a user wait for that.
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const sourceDirs = ['apps', 'libs', 'bench', 'tools', 'test'];
const sourceFiles = ['tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'];
const skippedDirs = new Set(['node_modules', 'dist', 'results']);
/** Files the code reads at run time beside itself (the web pages' templates and stylesheet), copied
 * into dist/ at the same place. */
const assetExtensions = ['.eta', '.css'];
const isSource = (name) => name.endsWith('.ts') || assetExtensions.some((ext) => name.endsWith(ext));

/** Newest modification time under dir: its .ts files, and the folders themselves (a removal). */
function newestUnder(dir) {
  let newest = fs.statSync(dir).mtimeMs;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !skippedDirs.has(entry.name)) {
      newest = Math.max(newest, newestUnder(full));
    } else if (entry.isFile() && isSource(entry.name)) {
      newest = Math.max(newest, fs.statSync(full).mtimeMs);
    }
  }
  return newest;
}

function newestSource() {
  const times = sourceDirs.map((dir) => newestUnder(path.join(root, dir)));
  for (const file of sourceFiles) times.push(fs.statSync(path.join(root, file)).mtimeMs);
  return Math.max(...times);
}

function stampTime() {
  try {
    return fs.statSync(stamp).mtimeMs;
  } catch {
    return 0;
  }
}

function run(tool) {
  const bin = path.join(root, 'node_modules', '.bin', tool);
  const result = spawnSync(bin, ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
  if (result.error) throw result.error;
  return result.status === null ? 1 : result.status;
}

/** Copies the asset files under dir into dist/, keeping their paths. */
function copyAssets(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory() && !skippedDirs.has(entry.name)) copyAssets(full);
    else if (entry.isFile() && assetExtensions.some((ext) => entry.name.endsWith(ext))) {
      const target = path.join(root, 'dist', path.relative(root, full));
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.copyFileSync(full, target);
    }
  }
}

function build() {
  // The stamp carries the time the build started, so an edit made while it ran counts as newer.
  const started = new Date();
  const status = run('tsc') || run('tsc-alias');
  if (status === 0) {
    for (const dir of ['apps', 'libs']) copyAssets(path.join(root, dir));
    fs.writeFileSync(stamp, '');
    fs.utimesSync(stamp, started, started);
  }
  return status;
}

const ifStale = process.argv.includes('--if-stale');
process.exitCode = ifStale && newestSource() < stampTime() ? 0 : build();
