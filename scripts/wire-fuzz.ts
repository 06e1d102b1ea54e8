/**
 * The wire fuzzer (test/fuzz/wire/harness.ts) over many seeds, in a process of its own: prints each failing seed with
 * its plan, what happened and what broke, then a tally of the errors seen. Usage: wire-fuzz.ts [first seed] [count]
 */
import { plan, wireRun } from '../test/fuzz/wire/harness.js';

const first = Number(process.argv[2] ?? 1);
const count = Number(process.argv[3] ?? 100);
const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(String(reason)));
let failed = 0;
const tally: Record<string, number> = {};
const started = Date.now();
for (let seed = first; seed < first + count; seed++) {
  const t = Date.now();
  const outcome = await wireRun(plan(seed));
  for (const error of outcome.errors) {
    const kind = error.replace(/msg_wire\d+|toolu_wire\d+|req_\w+|\d+/g, '#').slice(0, 120);
    tally[kind] = (tally[kind] ?? 0) + 1;
  }
  if (outcome.violations.length > 0) {
    failed++;
    console.log(JSON.stringify({ seed, ms: Date.now() - t, violations: outcome.violations, log: outcome.log, plan: outcome.plan }));
  }
}
console.log(JSON.stringify({ seeds: count, failed, ms: Date.now() - started, unhandled, tally }, null, 1));
if (failed > 0 || unhandled.length > 0) process.exitCode = 1;
