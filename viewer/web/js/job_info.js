// Reading ListJobs answers: process labels, ranks, states, GPUs.
import {num} from './api.js';
import {h} from './dom.js';

// Rank is -1 when unknown; proto3 JSON leaves a rank of 0 out, hence the default.
export const rankOf = (p) => (p.identity && p.identity.rank !== undefined ? p.identity.rank : 0);

export function processLabel(p) {
  const id = p.identity || {};
  const rank = rankOf(p);
  return (rank >= 0 ? 'rank ' + rank : 'process ' + p.process_id) + ' · ' + (id.host || '?') + ':' + (id.pid || '?');
}

export function sortedProcesses(job) {
  return [...(job.processes || [])].sort((a, b) => rankOf(a) - rankOf(b) || num(a.process_id) - num(b.process_id));
}

// Whatever the collector says ("dormant", "capturing", "connected", "disconnected", ...).
export const stateOf = (p) => p.state || 'unknown';
export const isLiveState = (s) => s !== 'disconnected' && s !== 'unknown';
export const isLiveJob = (job) => (job.processes || []).some((p) => isLiveState(stateOf(p)));

export function stateBadge(state, text) {
  return h('span', {class: 'badge state state-' + state.replace(/[^a-z_]/gi, '')}, text);
}

// A job's state in the words `gpuspy jobs` uses: its live processes by state ({"capturing": 2}),
// most frequent first; a job none of whose processes is connected any more is "finished".
export function stateCounts(job) {
  const counts = new Map();
  for (const p of job.processes || []) {
    if (isLiveState(stateOf(p))) counts.set(stateOf(p), (counts.get(stateOf(p)) || 0) + 1);
  }
  if (!counts.size) return [['finished', 0]];
  return [...counts.entries()].sort((a, b) => b[1] - a[1]);
}

// One state of stateCounts as `gpuspy jobs` prints it: "capturing (2)", "finished".
export const stateLabel = (state, n) => (state === 'finished' ? state : `${state} (${n})`);

// "2× NVIDIA H100 80GB HBM3"
export function gpuSummary(processes) {
  const counts = new Map();
  for (const p of processes) {
    for (const d of (p.identity && p.identity.devices) || []) {
      const name = d.name || 'GPU';
      counts.set(name, (counts.get(name) || 0) + 1);
    }
  }
  return [...counts.entries()].map(([n, c]) => (c > 1 ? c + '× ' : '') + n);
}

export function rankRange(processes) {
  const ranks = [...new Set(processes.map(rankOf).filter((r) => r >= 0))].sort((a, b) => a - b);
  if (!ranks.length) return '—';
  const runs = [];
  for (const r of ranks) {
    const last = runs[runs.length - 1];
    if (last && r === last[1] + 1) last[1] = r;
    else runs.push([r, r]);
  }
  return runs.map(([a, b]) => (a === b ? String(a) : a + '–' + b)).join(', ');
}

export const hostsOf = (processes) => [...new Set(processes.map((p) => (p.identity && p.identity.host) || '?'))];

export function lossText(p) {
  const l = p.loss || {};
  const dropped = num(l.cupti_dropped_records) + num(l.queue_dropped_events) + num(l.spill_dropped_events);
  const parts = [];
  if (dropped) parts.push(dropped + ' events dropped');
  if (num(p.sequence_gaps)) parts.push(num(p.sequence_gaps) + ' batches missing');
  return parts.join(', ');
}

export const attachCommand = (jobId) => 'gpuspy attach --job ' + shellQuote(jobId) + ' --steps 20';

export function shellQuote(s) {
  return /^[A-Za-z0-9_.:\/@%+=-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'";
}
