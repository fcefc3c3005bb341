// A real consumer of our Chrome traces: the Chrome DevTools trace engine (npm @paulirish/trace_engine,
// the Performance panel's parser) must put every slice zbsim writes into its thread's tree (it
// drops a slice that starts inside another and ends after it), nest slices only under an
// overlapped pair's block, and bind every flow point.
// usage: node devtools_trace_engine.mjs ZBSIM  (ZB_TRACE_ENGINE: the folder the package is installed in).
// Exit 77 (skipped) when the package is not installed: `npm install @paulirish/trace_engine` there.
import {execFileSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const zbsim = process.argv[2];
const root = process.env.ZB_TRACE_ENGINE ?? '';
const entry = path.join(root, 'node_modules/@paulirish/trace_engine/models/trace/trace.js');
if (!root || !fs.existsSync(entry)) {
  console.log(`skipped: no DevTools trace engine at '${entry}' (set ZB_TRACE_ENGINE)`);
  process.exit(77);
}
globalThis.DOMRect ??= class {};  // the engine expects a browser; nothing here draws
const Trace = await import(entry);

// Links that transfers share, so that they overlap in time in their own ways.
const nvlink = new URL('../../models/clusters/1x8-nvlink.json', import.meta.url).pathname;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'zb-devtools-'));
const runs = [
  ['zb-h1', '--p 4 --m 8 --tcomm 0.2'],
  ['1f1b-i', '--p 8 --m 16 --chunks 2 --tcomm 0.2 --engine simgrid'],
  ['zb-v-h', '--p 4 --m 8 --tcomm 0.3'],
  ['dualpipe-v', '--p 4 --m 8 --tcomm 0.3 --overlap 0.5 --steps 2'],
  ['zb-h2', `--p 8 --m 16 --engine simgrid --cluster ${nvlink} --bytes-act 2e8`],
];
let failed = 0;
for (const [schedule, flags] of runs) {
  const file = path.join(dir, `${schedule}.json`);
  execFileSync(zbsim, ['simulate', ...flags.split(' '), '--tf', '1', '--tb', '1', '--tw', '1', '--schedule', schedule,
                       '--chrome', file], {stdio: 'ignore'});
  const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents;
  const model = Trace.TraceModel.Model.createWithAllHandlers();
  await model.parse(events);
  const parsed = model.parsedTrace();
  const flows = (parsed.data ?? parsed).Flows.flows;
  const starts = events.filter(e => e.ph === 's').length;
  const points = events.filter(e => 'stf'.includes(e.ph)).length;
  const bound = flows.filter(f => f.length >= 2 && f.every(e => e !== undefined));
  const boundPoints = bound.reduce((n, f) => n + f.length, 0);
  const data = parsed.data ?? parsed;
  const slices = events.filter(e => e.ph === 'X');
  const inTree = slices.filter(e => data.Renderer.entryToNode.has(e)).length;
  let nested = 0;
  for (const node of data.Renderer.entryToNode.values()) nested += node.parent && node.parent.entry.cat !== 'overlap' ? 1 : 0;
  const ok = starts > 0 && bound.length === starts && boundPoints === points && inTree === slices.length && nested === 0;
  console.log(`${schedule} (${flags}): ${inTree} of ${slices.length} slices in the thread trees, ${nested} nested ` +
              `outside a pair, ${bound.length} of ${starts} flows bound, ${boundPoints} of ${points} points ` +
              `${ok ? 'ok' : 'FAILED'}`);
  if (!ok) ++failed;
}
fs.rmSync(dir, {recursive: true});
console.log(`${runs.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
