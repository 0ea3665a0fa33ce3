// Step detail: the step's breakdown (its device memory, communication split into waiting for a rank and transfer,
// where the cross-rank analysis gave it) and findings, the step on every rank, its timeline, its
// top kernels, and its trace.
import {api, num} from './api.js';
import {h, fill} from './dom.js';
import * as fmt from './format.js';
import {POLL_MS, setCrumbs, setLive} from './layout.js';
import {CATEGORIES, isTimeWindow, stepKind, stepKindLabel, stepNoun, stepParts} from './breakdown.js';
import {categoryLegend} from './step_chart.js';
import {findingCard, replayLine} from './findings.js';
import {kernelTable} from './kernels.js';
import {isLiveJob, processLabel} from './job_info.js';
import {Timeline} from './timeline/timeline.js';
import {IDLE_COLORS, PALETTE} from './timeline/colors.js';
import {keyValues} from './tooltip.js';
import {perfettoHint, traceFileName} from './export_page.js';
import {commSummary} from './comm_summary.js';
import {gpuTime} from './gpu_time.js';
import {memorySummary} from './memory.js';
import {hardwareFloor} from './hardware_floor.js';
import {rankLanes} from './rank_lanes.js';

export async function render(root, {job: jobId, process, step}, ctx) {
  const jobHref = '#/job/' + encodeURIComponent(jobId);
  const stepHref = (n) => jobHref + '/step/' + process + '/' + n;
  const [jobs, reportAnswer, steps, timelineJson] = await Promise.all([
    api.jobs(ctx.signal),
    api.reports(jobId, {process, step}, ctx.signal),
    api.steps(jobId, process, ctx.signal),
    api.timeline(jobId, process, step, ctx.signal),
  ]);
  const job = (jobs.jobs || []).find((j) => j.job_id === jobId);
  const proc = job && job.processes.find((p) => p.process_id === process);
  let report = (reportAnswer.reports || [])[0];
  if (!report) throw new Error('no report for step ' + step);
  const who = proc ? processLabel(proc) : 'process ' + process;
  const noun = stepNoun(report);
  setCrumbs({label: 'jobs', href: '#/'}, {label: jobId, href: jobHref}, {label: who}, {label: noun + ' ' + step});
  setLive(job ? isLiveJob(job) : false);

  const numbers = (steps.steps || []).map((s) => num(s.number)).sort((a, b) => a - b);
  const at = numbers.indexOf(step);
  const prev = at > 0 ? numbers[at - 1] : null;
  const next = at >= 0 && at < numbers.length - 1 ? numbers[at + 1] : null;

  const head = h('div', {class: 'page-head'});
  const summaryBox = h('div', {});
  const findingsBox = h('div', {class: 'findings'});
  const details = h('div', {class: 'event-details muted'}, 'Click an event for its details.');
  let timeline = new Timeline(timelineJson, {onSelect: (s) => showSelection(details, s, timeline)});
  const timelineBox = h('div', {class: 'timeline-box'}, timeline.el);
  const toolsBox = h('div', {}, timeline.toolbar());
  const kernelsBox = h('div', {});
  const ranksBox = h('div', {});
  // The same step on the other ranks, for the ranks panel: only a step with cross-rank data.
  const drawRanks = async () => {
    if (!report.comm) return fill(ranksBox);
    const all = (await api.reports(jobId, {step}, ctx.signal)).reports || [];
    const lanes = rankLanes(all, {width: ranksBox.clientWidth || root.clientWidth - 40, currentProcess: process,
      onSelect: (r) => { if (r.step.process_id !== process) location.hash = jobHref + '/step/' + r.step.process_id + '/' + step; }});
    fill(ranksBox, lanes ? h('section', {class: 'card ranks-panel'}, h('h2', {}, 'Ranks'),
      h('p', {class: 'muted'}, 'This step on every rank, aligned on the job clock. In each collective, dark: waiting for the last ' +
        'rank to arrive; light: moving data. ★ marks the rank the others waited for.'), lanes) : null);
  };

  const draw = () => {
    const kind = stepKind(report);
    const wall = num(report.breakdown.wall_ns);
    fill(head,
      h('div', {class: 'title-row'},
        h('h1', {}, isTimeWindow(report) ? 'Window ' : 'Step ', h('span', {class: 'step-number'}, step)),
        h('span', {class: 'badge kind-' + kind}, stepKindLabel(report)),
        h('span', {class: 'muted'}, who),
        h('span', {class: 'spacer'}),
        prev !== null ? h('a', {class: 'button', href: stepHref(prev)}, '‹ ' + noun + ' ' + prev) : null,
        next !== null ? h('a', {class: 'button', href: stepHref(next)}, noun + ' ' + next + ' ›') : null,
        h('a', {class: 'button primary download-step', href: api.traceUrl(jobId, {process, steps: step + '-' + step}),
          download: traceFileName(jobId, step + '-' + step, process)}, 'Download trace')),
      h('div', {class: 'stats'},
        stat('wall', fmt.ms(wall)),
        stat('GPU busy', wall ? fmt.pct(num(report.breakdown.gpu_busy_ns) / wall) : '—'),
        stat('primary bottleneck', h('code', {class: 'primary'}, report.primary_bottleneck || 'none')),
        stat('kernels', fmt.count(num(report.breakdown.kernel_count))),
        stat('copies', fmt.count(num(report.breakdown.memcpy_count)) + ' · ' + fmt.bytes(num(report.breakdown.memcpy_bytes))),
        stat('syncs', fmt.count(num(report.breakdown.sync_count))),
        stat('API calls', fmt.count(num(report.breakdown.api_call_count))),
        stat('events', fmt.count(num(report.event_count)))),
      report.capture_note ? h('p', {class: 'warn-box'}, 'Capture incomplete: ', report.capture_note) : null,
      dataQualityNote(report));
    fill(summaryBox, breakdownBar(report), categoryLegend([], {comm: Boolean(report.comm)}),
      gpuTime(report.kernel_classes), memorySummary(report.memory),
      hardwareFloor(report.floor, wall), report.comm ? commSummary(report.comm) : null);
    const replay = (report.findings || []).length ? replayLine(report.replay) : '';
    fill(findingsBox, (report.findings || []).length
      ? report.findings.map((f) => findingCard(f, wall, {onCallSite: (site) => {
        // The site's calls in time order, the next one on each click; the timeline scrolls into view.
        const i = timeline.nextCallAt(site);
        if (i >= 0) { timeline.reveal(i); timelineBox.scrollIntoView({block: 'center'}); }
      }}))
      : h('p', {class: 'muted'}, 'No findings for this step.'),
    replay ? h('p', {class: 'replay', dataset: {allFixesNs: String(num(report.replay.all_fixes_ns))}}, replay) : null);
    fill(kernelsBox, kernelTable(report.top_kernels || []));
  };
  draw();

  fill(root, h('section', {class: 'page step-page'}, head,
    h('section', {class: 'card'}, h('h2', {}, 'Where the time went'), summaryBox),
    h('section', {class: 'card'}, h('h2', {}, 'Findings'), findingsBox),
    ranksBox,
    h('section', {class: 'card'}, h('h2', {}, 'Timeline'), toolsBox, timelineLegend(), timelineBox, details,
      timelineJson.truncated ? h('p', {class: 'warn-box'}, 'This step has more events than the viewer loads; the timeline is cut.') : null),
    h('section', {class: 'card'}, h('h2', {}, 'Top kernels'), kernelsBox),
    h('section', {class: 'card'}, h('h2', {}, 'Export'),
      h('p', {}, h('a', {class: 'button', href: api.traceUrl(jobId, {process, steps: step + '-' + step}),
        download: traceFileName(jobId, step + '-' + step, process)}, 'This step'), ' ',
        h('a', {class: 'button', href: jobHref + '/export'}, 'A range of steps…')),
      perfettoHint())));
  timeline.resize();
  await drawRanks();
  // A handle for tests and the devtools console (zoom, reveal, screenPosition).
  window.__gpuspyTimeline = timeline;
  ctx.onClose(() => { timeline.destroy(); delete window.__gpuspyTimeline; delete window.__timelineStats; });

  // While a capture runs the last step may still be filling up: follow it.
  ctx.every(POLL_MS, async () => {
    const fresh = ((await api.reports(jobId, {process, step}, ctx.signal)).reports || [])[0];
    if (!fresh || fresh.event_count === report.event_count) return;
    report = fresh;
    draw();
    await drawRanks();
    const view = timeline.view;
    timeline.destroy();
    timeline = new Timeline(await api.timeline(jobId, process, step, ctx.signal), {onSelect: (s) => showSelection(details, s, timeline)});
    fill(timelineBox, timeline.el);
    fill(toolsBox, timeline.toolbar());
    timeline.view = view;
    timeline.resize();
    window.__gpuspyTimeline = timeline;
  });
}

function stat(label, value) {
  return h('div', {class: 'stat'}, h('span', {class: 'stat-label'}, label), h('span', {class: 'stat-value'}, value));
}

function breakdownBar(report) {
  const parts = stepParts(report);
  const wall = num(report.breakdown.wall_ns) || 1;
  return h('div', {class: 'hbar big'}, CATEGORIES.filter((c) => parts[c.cause] > 0).map((c) =>
    h('span', {style: {width: (100 * parts[c.cause] / wall) + '%', background: c.color},
      dataset: {cause: c.cause, ns: parts[c.cause]},
      title: `${c.label}: ${fmt.ms(parts[c.cause])} (${fmt.pct(parts[c.cause] / wall)})`},
    parts[c.cause] / wall > 0.08 ? `${c.label} ${fmt.ms(parts[c.cause], 1)}` : '')));
}

// A step whose recording cannot carry a verdict says so above everything else (the findings are
// still listed, for what they are worth): DataQuality in report.proto.
function dataQualityNote(report) {
  const q = report.data_quality;
  if (!q || !q.insufficient) return null;
  return h('div', {class: 'warn-box data-quality'},
    h('strong', {}, 'Insufficient data: no verdict on this step. '),
    (q.reasons || []).join('; '));
}

function timelineLegend() {
  const item = (color, label) => h('span', {class: 'legend-item'}, h('i', {style: {background: color}}), label);
  return h('div', {class: 'legend small'},
    item(PALETTE[0], 'kernel'), item(PALETTE[8], 'copy HtoD'), item(PALETTE[9], 'copy DtoH'), item(PALETTE[11], 'memset'),
    item(PALETTE[13], 'CUDA API'), item(PALETTE[12], 'sync / blocking'), item(PALETTE[15], 'NVTX'),
    h('span', {class: 'legend-sep'}, 'GPU idle:'),
    item(IDLE_COLORS.sync_blocked, 'sync-blocked'), item(IDLE_COLORS.launch_bound, 'launch-bound'),
    item(IDLE_COLORS.input, 'waiting for input'), item(IDLE_COLORS.host_other, 'host busy without CUDA'),
    item(IDLE_COLORS.cuda_call, 'host inside CUDA calls'));
}

function showSelection(box, s, timeline) {
  if (!s) {
    fill(box, 'Click an event for its details.');
    box.className = 'event-details muted';
    return;
  }
  box.className = 'event-details';
  const e = s.event, r = s.related;
  const rows = (d) => keyValues([['kind', d.kind], ['duration', fmt.duration(d.end - d.start)],
    ['start', fmt.duration(d.start) + ' into the step'], ['details', d.info], ['lane', d.lane],
    ['correlation', d.correlation || '']]);
  fill(box,
    h('div', {class: 'sel'}, h('h3', {}, e.name), rows(e)),
    r ? h('div', {class: 'sel related'},
      h('h3', {}, e.kind === 'api' ? 'Launched: ' : 'Launched by: ', h('span', {class: 'related-name'}, r.name)),
      rows(r),
      h('button', {type: 'button', class: 'button', onclick: () => timeline.reveal(r.index)}, 'go to it')) : null);
}
