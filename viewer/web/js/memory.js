// A step's device memory (StepReport.memory; docs/detectors.md, "Device memory"): the level when
// the step ends, its change over the step and its peak — the CLI's memory line — and where the
// step's still-live allocations were made, when the call sites are known.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';

const signed = (n) => (n < 0 ? '-' + fmt.bytes(-n) : '+' + fmt.bytes(n));

const SOURCE_TITLE = {
  segments: 'cudaMalloc\'d segments live (CUPTI): the caching allocator\'s reserved memory',
  allocator: 'the caching allocator\'s totals (PyTorch profiler [memory] events)',
};

export function memorySummary(memory) {
  if (!memory) return null;
  const allocated = Boolean(memory.has_allocated);
  const parts = [`${fmt.bytes(num(memory.reserved_end_bytes))} reserved (${signed(num(memory.reserved_growth_bytes))} in the step)`];
  if (allocated) {
    parts.push(`${fmt.bytes(num(memory.allocated_end_bytes))} allocated (${signed(num(memory.allocated_growth_bytes))})`);
  }
  parts.push(`peak ${fmt.bytes(num(memory.reserved_peak_bytes))} reserved` +
    (allocated ? ` / ${fmt.bytes(num(memory.allocated_peak_bytes))} allocated` : ''));
  const sites = memory.sites || [];
  return h('div', {class: 'memory'},
    h('p', {class: 'memory-line', title: SOURCE_TITLE[memory.source] || memory.source,
      'data-growth': num(memory.reserved_growth_bytes)},
    `Device memory (${memory.source}): ` + parts.join(', ')),
    sites.length ? h('ul', {class: 'memory-sites muted'}, sites.map((s) =>
      h('li', {}, `${fmt.bytes(num(s.bytes))} still live, allocated at `, h('code', {}, s.call_site),
        ` (${fmt.count(num(s.count))}×)`))) : null);
}
