/** Load generation with autocannon in a child process run by the same Node binary as the bench. */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./autocannon-child.mjs', import.meta.url));

/**
 * One autocannon run. Fails (throws) when any response was not 2xx or any request errored:
 * a benchmark of error responses measures nothing.
 */
export function runAutocannon(options) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CHILD, JSON.stringify(options)], { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`autocannon child failed: ${error.message}\n${stderr}`));
      let result;
      try {
        result = JSON.parse(stdout.trim().split('\n').at(-1));
      } catch {
        return reject(new Error(`autocannon child printed no result: ${stdout.slice(0, 200)} ${stderr.slice(0, 200)}`));
      }
      if (result.non2xx > 0 || result.errors > 0 || result.timeouts > 0 || result.total === 0) {
        return reject(
          new Error(
            `load run had failures: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts of ${result.total}`,
          ),
        );
      }
      resolve(result);
    });
  });
}
