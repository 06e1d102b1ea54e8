/**
 * The history fuzzer (test/fuzz/history/harness.ts) over many seeds, in a process of its own: prints each
 * failing seed with its plan, what happened and what broke. Usage: history-fuzz.ts [first seed] [count]
 */
import { fuzzRun, plan } from '../test/fuzz/history/harness.js';

const first = Number(process.argv[2] ?? 1);
const count = Number(process.argv[3] ?? 100);
const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(String(reason)));
let failed = 0;
const tally: Record<string, number> = {};
const count_ = (key: string, n = 1) => (tally[key] = (tally[key] ?? 0) + n);
const started = Date.now();
for (let seed = first; seed < first + count; seed++) {
  const t = Date.now();
  const outcome = await fuzzRun(plan(seed));
  const { seen } = outcome;
  count_(`stoppedBy ${seen.stoppedBy}`);
  for (const error of seen.errors) count_(`error ${error}`);
  count_('requests', seen.requests);
  count_('messages pushed', seen.pushed);
  count_('snapshots', seen.snapshots);
  count_('calls run', seen.ran);
  if (outcome.violations.length > 0 || Date.now() - t > 3000) {
    failed += outcome.violations.length > 0 ? 1 : 0;
    console.log(JSON.stringify({ seed, ms: Date.now() - t, violations: outcome.violations, log: outcome.log, plan: outcome.plan }));
  }
}
console.log(JSON.stringify({ seeds: count, failed, ms: Date.now() - started, unhandled, tally }));
if (failed > 0 || unhandled.length > 0) process.exitCode = 1;
