// A job at a glance, from its summary (JobSummary): the verdict that cost the most steady time
// and the median steady step, for the jobs list.
import {num} from './api.js';
import {h} from './dom.js';
import * as fmt from './format.js';
import {verdictColor} from './verdicts.js';

// {verdict, lost_ns, step_ns}; verdict 'none' when steady steps lost nothing, null without steady
// steps (warm-up only, or nothing segmented yet).
// A job whose steps were not found (only time windows) gets no verdict: {notFound: true}.
export function jobVerdict(summary) {
  if (summary && summary.figures_per_window) return {verdict: null, notFound: true, lost_ns: 0, step_ns: 0};
  if (!summary || !num(summary.steady_step_count)) return {verdict: null, lost_ns: 0, step_ns: 0};
  // JobSummary.bottlenecks: the steady steps' primary bottlenecks, the most common first.
  const best = (summary.bottlenecks || [])[0] || null;
  return {
    verdict: best ? best.detector : 'none',
    lost_ns: best ? num(best.median_lost_ns) : 0,
    step_ns: num(summary.median_step_wall_ns),
  };
}

export function verdictCell(v) {
  if (v && v.notFound) {
    return h('span', {class: 'muted steps-not-found', title: 'no NVTX range matched the step pattern and no ' +
      'repeating kernel sequence was found: the job is cut into time windows'}, 'steps not found');
  }
  if (!v || !v.verdict) return h('span', {class: 'muted'}, '—');
  const text = v.verdict === 'none' ? 'no bottleneck' : v.verdict;
  return h('span', {class: 'job-verdict', dataset: {verdict: v.verdict},
    title: v.lost_ns ? `${fmt.ms(v.lost_ns)} lost per steady step (median)` : ''},
  h('i', {class: 'swatch', style: {background: verdictColor(v.verdict)}}), text);
}
