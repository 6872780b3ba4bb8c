#!/usr/bin/env node
// Checked in (not built) so that `npm ci` can link the command before `dist/` exists.
import '../dist/cli/main.js';
