#!/usr/bin/env node
// API reports of every published entry (issue 43): `packages/<p>/api/<entry>.api.md`, written by
// @microsoft/api-extractor from the built declarations (run `npm run build` first), one report per
// `exports` subpath of each published package.json (`index` for "."). A change of a public face
// therefore shows up in review as a diff of these files.
//
//   npm run api                     rewrite the reports from the build
//   npm run api -- --check          (part of `npm test`) exit 1 when a report differs from the
//                                   build; never writes a report (also when CI is set)
//   --only <package>/<entry>        one entry, e.g. resource-server/core or client/index
//   --report-dir <dir>              read (and write) that entry's report in <dir> instead
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (file) => JSON.parse(readFileSync(file, 'utf8'));

const { values } = parseArgs({
  options: {
    check: { type: 'boolean', default: false },
    only: { type: 'string' },
    'report-dir': { type: 'string' },
  },
});
// CI never rewrites a report silently: an unreviewed change fails instead.
const check = values.check || (process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false');

/** Every published entry: { pkg, entry, dir, types } from each package's `exports`. */
function publishedEntries() {
  const entries = [];
  for (const ws of readJson(join(root, 'package.json')).workspaces) {
    const dir = join(root, ws);
    const manifest = readJson(join(dir, 'package.json'));
    if (manifest.private || !ws.startsWith('packages/')) continue;
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (typeof target !== 'object' || target === null || typeof target.types !== 'string') continue;
      entries.push({ pkg: ws.slice('packages/'.length), entry: subpath === '.' ? 'index' : subpath.slice(2), dir, types: target.types });
    }
  }
  return entries;
}

let entries = publishedEntries();
if (values.only !== undefined) {
  entries = entries.filter(({ pkg, entry }) => `${pkg}/${entry}` === values.only);
  if (entries.length === 0) {
    console.error(`api-report: no published entry ${values.only}`);
    process.exit(2);
  }
}
if (values['report-dir'] !== undefined && entries.length !== 1) {
  console.error('api-report: --report-dir needs --only <package>/<entry>');
  process.exit(2);
}

const temp = mkdtempSync(join(tmpdir(), 'mcp-auth-kit-api-'));
const failed = [];
try {
  for (const { pkg, entry, dir, types } of entries) {
    const configObject = {
      projectFolder: dir,
      mainEntryPointFilePath: join(dir, types),
      compiler: {
        // the declarations only (the build checked the sources): the settings of tsconfig.base.json that matter to them
        overrideTsconfig: {
          compilerOptions: {
            target: 'es2022',
            module: 'nodenext',
            moduleResolution: 'nodenext',
            lib: ['es2023', 'dom'],
            types: ['node'],
            strict: true,
            skipLibCheck: true,
          },
          files: [join(dir, types)],
        },
      },
      apiReport: {
        enabled: true,
        reportFileName: `${entry}.api.md`,
        reportFolder: values['report-dir'] !== undefined ? resolve(values['report-dir']) : join(dir, 'api'),
        reportTempFolder: join(temp, pkg),
      },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        // a type reachable from the entry but not exported by it is named in the report
        // (`ae-forgotten-export`): review sees it, the build does not fail on it
        extractorMessageReporting: {
          default: { logLevel: 'none' },
          'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    };
    if (!check) mkdirSync(configObject.apiReport.reportFolder, { recursive: true });
    const config = ExtractorConfig.prepare({
      configObject,
      configObjectFullPath: undefined,
      packageJsonFullPath: join(dir, 'package.json'),
    });
    const result = Extractor.invoke(config, { localBuild: !check, messageCallback: quietApiReportMessages });
    const name = `@mcp-auth-kit/${pkg}${entry === 'index' ? '' : `/${entry}`}`;
    if (check && result.apiReportChanged) {
      failed.push(name);
      console.error(
        `api-report: ${name}: the API report differs from the build (${join(configObject.apiReport.reportFolder, `${entry}.api.md`)}); ` +
          'run `npm run build && npm run api` and commit the report with the change',
      );
    } else if (!result.succeeded) {
      failed.push(name);
      console.error(`api-report: ${name}: api-extractor failed (messages above)`);
    } else if (result.apiReportChanged) {
      console.log(`api-report: ${name}: report updated`);
    }
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}
if (failed.length > 0) process.exit(1);
console.log(`api-report: ${entries.length} entr${entries.length === 1 ? 'y' : 'ies'} ${check ? 'match their reports' : 'written'}`);

/** api-extractor's own progress lines stay out of `npm test`; problems are reported above. */
function quietApiReportMessages(message) {
  if (message.logLevel === 'info' || message.logLevel === 'verbose') message.handled = true;
}
