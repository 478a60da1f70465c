#!/usr/bin/env node
// The `salus` command: the compiled CLI lives in dist/ (built by `npm run build`).
import '../dist/core/cli/main.js';
