/**
 * The control-API fuzz over many seeds, in a process of its own. Usage: run.ts [firstSeed] [count] [--trace]
 */
import { configOf, fuzzRun } from './harness.js';

const first = Number(process.argv[2] ?? 1);
const count = Number(process.argv[3] ?? 50);
const showTrace = process.argv.includes('--trace');
let failures = 0;
const errorKinds: Record<string, number> = {};
const stops: Record<string, number> = {};
let requests = 0;
let compared = 0;
for (let seed = first; seed < first + count; seed++) {
  const started = Date.now();
  const outcome = await fuzzRun(seed);
  stops[outcome.stoppedBy] = (stops[outcome.stoppedBy] ?? 0) + 1;
  requests += outcome.requests;
  compared += outcome.compared;
  for (const error of outcome.errors) {
    const kind = error.replace(/toolu_\w+|PUSH-\S+|\d+/g, '#').slice(0, 110);
    errorKinds[kind] = (errorKinds[kind] ?? 0) + 1;
  }
  if (outcome.violations.length > 0) {
    failures++;
    console.log(`seed ${seed} ${JSON.stringify(configOf(seed))} (${Date.now() - started} ms)`);
    for (const violation of [...new Set(outcome.violations)]) console.log(`  ! ${violation}`);
    if (showTrace) for (const line of outcome.trace) console.log(`    ${line}`);
  }
}
console.log(JSON.stringify({ first, count, failures, requests, compared, stops, errorKinds }, null, 1));
