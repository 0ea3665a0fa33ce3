// Job overview: step-time chart per rank, the ranks x steps heatmap of a multi-rank job, the job's
// top findings, the per-rank (straggler) comparison and the top kernels. Reloads its data when the collector has new events for the job.
import {api, num} from './api.js';
import {h, fill, commandHint} from './dom.js';
import * as fmt from './format.js';
import {POLL_MS, setCrumbs, setLive} from './layout.js';
import {CATEGORIES, hasComm, partsByCause} from './breakdown.js';
import {heatmapLegend, isMultiRank, rankHeatmap} from './rank_heatmap.js';
import {stepChart, categoryLegend} from './step_chart.js';
import {severityBadge} from './findings.js';
import {kernelTable} from './kernels.js';
import {gpuTime} from './gpu_time.js';
import {largestGain} from './largest_gain.js';
import {jobFloor} from './hardware_floor.js';
import {diffHref} from './diff_page.js';
import {jobActions} from './job_actions.js';
import {
  attachCommand, gpuSummary, isLiveJob, processLabel, rankOf, sortedProcesses, stateBadge, stateCounts, stateLabel,
} from './job_info.js';

export async function render(root, {job: jobId}, ctx) {
  const jobHref = '#/job/' + encodeURIComponent(jobId);
  setCrumbs({label: 'jobs', href: '#/'}, {label: jobId, href: jobHref});
  const state = {process: null, data: null, version: ''};

  const head = h('div', {class: 'page-head'});
  const chartBox = h('div', {class: 'chart-box'});
  const tabs = h('div', {class: 'tabs', role: 'tablist'});
  const legendBox = h('div', {});
  const heatmapBox = h('div', {});
  const findingsBox = h('div', {});
  const ranksBox = h('div', {});
  const kernelsBox = h('div', {});
  fill(root, h('section', {class: 'page job-page'}, head,
    h('section', {class: 'card'}, h('h2', {}, 'Step time'), tabs, chartBox, legendBox),
    heatmapBox,
    h('section', {class: 'card'}, h('h2', {}, 'Top findings'), findingsBox),
    ranksBox,
    h('section', {class: 'card'}, h('h2', {}, 'Where the GPU time goes (steady steps)'), kernelsBox)));

  const load = async () => {
    const [jobs, reports, summary] = await Promise.all([
      api.jobs(ctx.signal), api.reports(jobId, {all: 1}, ctx.signal), api.summary(jobId, ctx.signal)]);
    const job = (jobs.jobs || []).find((j) => j.job_id === jobId);
    if (!job) throw new Error("job '" + jobId + "' is gone (retention?)");
    state.version = job.event_count + '/' + job.step_count;
    state.data = {job, summary: summary.summary || {}, byProcess: groupByProcess(reports.reports || [])};
  };

  const draw = () => {
    const {job, summary, byProcess} = state.data;
    const procs = sortedProcesses(job).filter((p) => byProcess.has(p.process_id));
    if (!procs.some((p) => p.process_id === state.process)) state.process = procs.length ? procs[0].process_id : null;
    setLive(isLiveJob(job));
    drawHead(head, job, summary, jobId);
    fill(tabs, procs.length > 1 ? procs.map((p) => h('button', {
      type: 'button', role: 'tab', class: 'tab' + (p.process_id === state.process ? ' active' : ''),
      'aria-selected': String(p.process_id === state.process), dataset: {process: p.process_id},
      onclick: () => { state.process = p.process_id; draw(); },
    }, processLabel(p))) : null);
    const reports = state.process ? byProcess.get(state.process) : [];
    const rankSummary = (summary.ranks || []).find((r) => r.process_id === state.process) || {};
    fill(chartBox, reports.length
      ? stepChart(reports, {
        width: chartBox.clientWidth || root.clientWidth - 40,
        medianNs: num(rankSummary.median_wall_ns),
        onSelect: (r) => { location.hash = jobHref + '/step/' + r.step.process_id + '/' + num(r.step.number); },
      })
      : h('p', {class: 'muted'}, 'No steps yet: steps appear once the job has run a few iterations.'));
    fill(legendBox, categoryLegend([h('span', {class: 'legend-item'}, h('i', {class: 'hatched'}), 'warm-up (W) / outlier (O): not steady')],
      {comm: hasComm(reports)}));
    drawHeatmap(heatmapBox, summary, procs, jobHref, chartBox.clientWidth || root.clientWidth - 40);
    drawFindings(findingsBox, summary.findings || [], jobHref);
    drawRanks(ranksBox, procs, summary.ranks || []);
    fill(kernelsBox, largestGain(summary.largest_gain), gpuTime(summary.kernel_classes), jobFloor(summary.floor),
      kernelTable(summary.top_kernels || []));
  };

  await load();
  draw();
  ctx.onClose(() => { delete window.__rankHeatmap; });
  const onResize = () => { if (state.data) draw(); };
  let resizeTimer = 0;
  const debounced = () => { clearTimeout(resizeTimer); resizeTimer = setTimeout(onResize, 150); };
  window.addEventListener('resize', debounced);
  ctx.onClose(() => window.removeEventListener('resize', debounced));
  ctx.every(POLL_MS, async () => {
    const jobs = await api.jobs(ctx.signal);
    const job = (jobs.jobs || []).find((j) => j.job_id === jobId);
    if (job && job.event_count + '/' + job.step_count !== state.version) {
      await load();
      draw();
    } else if (job) {
      state.data.job = job;  // states and last-seen move without new events
      drawHead(head, job, state.data.summary, jobId);
      setLive(isLiveJob(job));
    }
  });
}

// A multi-rank job: the two ranks the summary picks (JobSummary.compare_ranks: the rank the others
// waited for most against the fastest). One rank: the job against another, for the user to name.
function compareHref(jobId, summary) {
  const pair = summary.compare_ranks;
  if (!pair) return diffHref(jobId, '');
  return diffHref(jobId + '@' + num(pair.a), jobId + '@' + num(pair.b));
}

function groupByProcess(reports) {
  const by = new Map();
  for (const r of reports) {
    const p = r.step.process_id;
    if (!by.has(p)) by.set(p, []);
    by.get(p).push(r);
  }
  for (const list of by.values()) list.sort((a, b) => num(a.step.number) - num(b.step.number));
  return by;
}

function drawHead(head, job, summary, jobId) {
  const procs = sortedProcesses(job);
  fill(head,
    h('div', {class: 'title-row'},
      h('h1', {}, 'Job ', h('span', {class: 'job-id'}, jobId)),
      stateCounts(job).map(([s, n]) => stateBadge(s, stateLabel(s, n))),
      h('span', {class: 'spacer'}),
      h('a', {class: 'button', id: 'compare-link', href: compareHref(jobId, summary)}, 'Compare…'),
      h('a', {class: 'button', href: '#/job/' + encodeURIComponent(jobId) + '/export'}, 'Export trace…'),
      jobActions(jobId)),
    h('div', {class: 'stats'},
      stat('processes', procs.length),
      stat('GPUs', gpuSummary(procs).join(', ') || '—'),
      // A job whose steps were not found is described per time window (analysis/step_kind.h).
      summary.figures_per_window
        ? stat('steps', h('span', {class: 'no-steps', title: 'no NVTX range matched the step pattern and no repeating ' +
            'kernel sequence was found: the figures are per ' + 'time window'},
          'no steps found: time windows (' + fmt.count(num(summary.window_count)) + ')'))
        : stat('steps', fmt.count(num(summary.step_count)) + ' (' + fmt.count(num(summary.steady_step_count)) + ' steady)'),
      // The job's own step pattern (gpuspy jobs set-step-pattern), when it has one.
      job.step_pattern ? stat('step pattern', h('code', {class: 'step-pattern'}, job.step_pattern)) : null,
      stat('median step', num(summary.median_step_wall_ns) ? fmt.ms(num(summary.median_step_wall_ns)) : '—'),
      stat(summary.figures_per_window ? 'median GPU busy per window' : 'median GPU busy',
        summary.median_gpu_busy_fraction ? fmt.pct(summary.median_gpu_busy_fraction) : '—'),
      stat('events', fmt.count(num(summary.event_count))),
      stat('last seen', fmt.ago(num(job.last_seen_unix_ns)))),
    isLiveJob(job) ? h('p', {class: 'attach'}, 'Capture more steps of this running job: ',
      commandHint(attachCommand(jobId))) : null);
}

function stat(label, value) {
  return h('div', {class: 'stat'}, h('span', {class: 'stat-label'}, label), h('span', {class: 'stat-value'}, value));
}

// Ranks x steps of a multi-rank job, from the cross-rank analysis (JobSummary.steps).
function drawHeatmap(box, summary, procs, jobHref, width) {
  if (!isMultiRank(summary)) { fill(box); delete window.__rankHeatmap; return; }
  const processOfRank = (rank) => (procs.find((p) => rankOf(p) === rank) || {}).process_id;
  const heatmap = rankHeatmap(summary, {
    width,
    onSelect: (cell, step) => {
      const process = cell.process_id || processOfRank(num(cell.rank));
      if (process) location.hash = jobHref + '/step/' + process + '/' + num(step.number);
    },
  });
  // A handle for tests and the console: cellPosition(rank, step).
  window.__rankHeatmap = heatmap;
  fill(box, h('section', {class: 'card heatmap'}, h('h2', {}, 'Ranks × steps'),
    h('p', {class: 'muted'}, 'Each rank\'s verdict per step. In data-parallel training every rank waits for the last one to ' +
      'reach each collective: the outlined cells are the rank the others waited for. Click a cell for that rank\'s step.'),
    heatmap, heatmapLegend(summary)));
}

// JobSummary.findings: one row per detector, as the analysis aggregated them.
function drawFindings(box, findings, jobHref) {
  if (!findings.length) {
    fill(box, h('p', {class: 'muted'}, 'No findings: nothing slows these steps down that gpuspy knows of.'));
    return;
  }
  fill(box, h('table', {class: 'table findings-table'},
    h('thead', {}, h('tr', {}, ['', 'finding', 'steps', 'est. lost per step', 'example (worst step)', 'fix'].map((t) => h('th', {}, t)))),
    h('tbody', {}, findings.map((a) => h('tr', {class: 'job-finding', dataset: {detector: a.detector, lostPerStepNs: num(a.lost_per_step_ns)}},
      h('td', {}, severityBadge(a.severity)),
      h('td', {}, h('code', {}, a.detector)),
      h('td', {class: 'num'}, num(a.steps) + ' / ' + num(a.of_steps) + (a.steady_only ? ' steady' : '')),
      h('td', {class: 'num'}, num(a.lost_per_step_ns) > 0 ? fmt.ms(num(a.lost_per_step_ns)) : '—'),
      h('td', {}, h('a', {href: jobHref + '/step/' + a.worst_step.process_id + '/' + num(a.worst_step.number)},
        'step ' + num(a.worst_step.number)), ': ', a.title),
      h('td', {class: 'fix'}, a.fix_hint || ''))))));
}

// Straggler view: each rank's steady steps side by side (JobSummary.ranks); the slowest rank's
// bar stands out.
function drawRanks(box, procs, ranks) {
  if (procs.length < 2 || ranks.length < 2) { fill(box); return; }
  const procOf = new Map(procs.map((p) => [p.process_id, p]));
  const slowest = Math.max(...ranks.map((r) => num(r.median_wall_ns)));
  fill(box, h('section', {class: 'card ranks'}, h('h2', {}, 'Ranks'),
    h('p', {class: 'muted'}, 'Median over each rank\'s steady steps. In data-parallel training every rank waits for the slowest one.'),
    h('table', {class: 'table ranks-table'},
      h('thead', {}, h('tr', {}, ['rank', 'host', 'steady steps', 'median step', '', 'own work vs fastest', 'waiting in collectives', 'primary bottleneck', 'straggler']
        .map((t) => h('th', {}, t)))),
      h('tbody', {}, ranks.map((r) => {
        const p = procOf.get(r.process_id) || {identity: {}};
        const straggler = num(r.straggler_findings) > 0;
        const over = r.own_work_over_fastest || 0;
        return h('tr', {class: 'rank-row' + (straggler ? ' is-straggler' : ''), dataset: {process: r.process_id}},
          h('td', {class: 'num'}, num(r.rank)),
          h('td', {}, (p.identity.host || r.host || '?') + ':' + (p.identity.pid || '?')),
          h('td', {class: 'num'}, num(r.steady_steps)),
          h('td', {class: 'num'}, fmt.ms(num(r.median_wall_ns))),
          h('td', {class: 'bar-cell'}, rankBar(partsByCause(r.median_parts), slowest)),
          h('td', {class: 'num' + (r.slow_own_work ? ' warn' : ''),
            title: 'median step minus the time waiting in collectives for other ranks'},
          over > 0 ? '+' + fmt.pct(over) : 'fastest'),
          h('td', {class: 'num', title: 'median time inside collectives (NCCL) waiting for the last rank to arrive'},
            num(r.median_wait_ns) ? fmt.ms(num(r.median_wait_ns)) : '—'),
          h('td', {}, h('code', {}, r.primary_bottleneck || 'none')),
          // May wrap (the other cells keep one line): it is the longest, and at a narrow window
          // it spilled out of the card. The finding's whole title is its tooltip.
          h('td', {class: 'straggler-cell', title: straggler ? r.straggler_title : undefined},
            straggler ? [severityBadge(r.straggler_severity), ' ',
              'slowest; others wait ~' + fmt.ms(num(r.straggler_median_lost_ns))] : ''));
      })))));
}

function rankBar(parts, scaleNs) {
  const bar = h('div', {class: 'hbar'});
  for (const c of CATEGORIES) {
    const ns = parts[c.cause] || 0;
    if (ns > 0) {
      bar.append(h('span', {style: {width: (100 * ns / scaleNs) + '%', background: c.color},
        title: c.label + ': ' + fmt.ms(ns)}));
    }
  }
  return bar;
}
