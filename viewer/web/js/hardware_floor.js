// A step's hardware floor (StepReport.floor; docs/hardware-floor.md): its floor, MFU and each
// kind of math's achieved rate against the device's peak: the CLI's "hardware:" line and work
// lines (analysis/hardware/floor_text.h), from the same fields.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';

const KIND = {
  WORK_KIND_MATMUL_TENSOR: 'matmul on tensor cores',
  WORK_KIND_MATMUL_SIMT: 'matmul on CUDA cores',
  WORK_KIND_MEMORY: 'memory-bound',
};

const percent = (x) => `${Math.round(100 * x)}%`;

export function workLine(b) {
  const flops = num(b.flops);
  let line = `${KIND[b.kind] || 'other'}${b.dtype ? ' ' + b.dtype : ''}: `;
  if (flops > 0) {
    line += fmt.rate(num(b.achieved_flops_per_s), 'FLOP/s');
    if (num(b.peak_flops_per_s) > 0) line += ` (${percent(num(b.flops_fraction))} of peak)`;
  } else {
    line += fmt.rate(num(b.achieved_bytes_per_s), 'B/s');
    if (num(b.peak_bytes_per_s) > 0) line += ` (${percent(num(b.bytes_fraction))} of memory bandwidth)`;
  }
  line += `, ${fmt.ms(num(b.kernel_ns), 1)} of kernels, ${num(b.ops)} ops`;
  if (num(b.roofline_ns) > 0) line += `, at the roofline ${fmt.ms(num(b.roofline_ns), 1)}`;
  return line;
}

// The counters' readings (CounterReadings), unmeasured ones (-1) left out: floor_text.h's
// CounterReadingsText.
export function counterReadings(r) {
  const parts = [];
  // A reading of 0 may be left out of the JSON (proto3's default): it is 0, not unmeasured (-1).
  const add = (key, before, after) => {
    const v = r ? num(r[key] ?? 0) : -1;
    if (v >= 0) parts.push(`${before}${percent(v / 100)}${after}`);
  };
  add('tensor_active_pct', 'tensor pipes ', ' busy');
  add('dram_throughput_pct', 'DRAM ', ' of peak bandwidth');
  add('sm_active_pct', 'SMs ', ' active');
  add('gpu_active_pct', 'GPU ', ' busy');
  return parts.join(', ');
}

// A step's counter lines (StepFloor.counters): floor_text.h's CounterLines.
export function counterLines(floor) {
  const c = floor && floor.counters;
  if (!c) return [];
  const lines = [`counters (device ${num(c.device_id)}, ${fmt.ms(num(c.sampled_ns), 1)} sampled): ${counterReadings(c.step)}`];
  for (const k of c.classes || []) {
    lines.push(`${k.kernel_class} (${fmt.ms(num(k.sampled_ns), 1)} sampled): ${counterReadings(k.readings)}`);
  }
  return lines;
}

function countersBox(floor) {
  const lines = counterLines(floor);
  if (!lines.length) return null;
  const [first, ...classes] = lines;
  const step = floor.counters.step || {};
  return h('div', {class: 'hardware-counters', 'data-tensor-pct': num(step.tensor_active_pct ?? 0),
                   'data-dram-pct': num(step.dram_throughput_pct ?? 0)},
    h('p', {class: 'counter-line'}, first),
    h('ul', {class: 'counter-classes muted'}, classes.map((l) => h('li', {}, l))));
}

export function hardwareFloor(floor, wallNs) {
  const work = (floor && floor.work) || [];
  if (!work.length) return countersBox(floor);
  const parts = [];
  if (num(floor.floor_ns) > 0) {
    parts.push(`floor ${fmt.ms(num(floor.floor_ns), 1)} of ${fmt.ms(wallNs, 1)} (GPU busy ${fmt.ms(num(floor.gpu_busy_ns), 1)})`);
  }
  if (num(floor.mfu) > 0) parts.push(`MFU ${percent(num(floor.mfu))}`);
  if (floor.device) parts.push(`device ${floor.device}${floor.device_known ? '' : ' (not in the peak table)'}`);
  for (const n of floor.notes || []) parts.push(n);
  return h('div', {class: 'hardware-floor', 'data-floor-ns': num(floor.floor_ns), 'data-mfu': num(floor.mfu)},
    h('p', {class: 'floor-line'}, 'Hardware: ' + parts.join('; ')),
    h('ul', {class: 'floor-work muted'}, work.map((b) => h('li', {}, workLine(b)))),
    countersBox(floor));
}

// The job's line (JobSummary.floor): analysis/hardware/floor_text.h's JobFloorLine.
export function jobFloor(floor) {
  if (!floor) return null;
  const steps = num(floor.steps);
  const parts = [];
  if (steps > 0) {
    if (floor.device_known) parts.push(`median MFU ${percent(num(floor.median_mfu))}`);
    if (num(floor.median_floor_ns) > 0) {
      parts.push(`floor ${fmt.ms(num(floor.median_floor_ns), 1)} of a ${fmt.ms(num(floor.median_wall_ns), 1)} step`);
    }
    parts.push(`${fmt.rate(num(floor.median_achieved_flops_per_s), 'FLOP/s')} over the step (${steps} ${steps === 1 ? 'step' : 'steps'} with FLOPs` +
      (floor.device ? `; device ${floor.device}` : '') + (floor.device && !floor.device_known ? ', not in the peak table' : '') + ')');
  }
  for (const n of floor.notes || []) parts.push(n);
  const counterSteps = num(floor.counter_steps);
  if (counterSteps > 0) {
    parts.push(`counters: ${counterReadings(floor.median_counters)} (median of ${counterSteps} ${counterSteps === 1 ? 'step' : 'steps'})`);
  }
  if (!parts.length) return null;
  return h('p', {class: 'job-floor', 'data-median-mfu': num(floor.median_mfu)}, 'Hardware: ' + parts.join('; '));
}
