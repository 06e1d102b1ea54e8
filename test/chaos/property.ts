/**
 * The reliability property over random runs, in a process of its own: it must end by itself (no
 * open handle, timer or socket left) and print what it tried. Usage: property.ts [runs] [seed]
 */
import fc from 'fast-check';
import { runScenario, scenarios } from './scenario.js';

const numRuns = Number(process.argv[2] ?? 100);
const seed = process.argv[3] === undefined ? Date.now() : Number(process.argv[3]);
const unhandled: string[] = [];
process.on('unhandledRejection', (reason) => unhandled.push(String(reason)));

const faults: Record<string, number> = {};
const errors: Record<string, number> = {};
let runs = 0;
let iterations = 0;
const failure = await fc
  .assert(
    fc.asyncProperty(scenarios({ withRunControl: true }), async (scenario) => {
      const outcome = await runScenario(scenario);
      runs++;
      iterations += outcome.iterations;
      for (const fault of outcome.faults) faults[fault] = (faults[fault] ?? 0) + 1;
      for (const error of outcome.errors) {
        const kind = error.split(':')[0]!;
        errors[kind] = (errors[kind] ?? 0) + 1;
      }
      if (outcome.violations.length > 0) throw new Error(`violations: ${outcome.violations.join('; ')}`);
    }),
    { numRuns, seed },
  )
  .then(
    () => undefined,
    (error: unknown) => String(error),
  );
console.log(JSON.stringify({ seed, runs, iterations, faults, errors, unhandled, failure }));
if (failure || unhandled.length > 0) process.exitCode = 1;
