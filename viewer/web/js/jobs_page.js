// Jobs: every job the collector knows, live ones first, with their processes.
import {api, num} from './api.js';
import {h, fill, commandHint} from './dom.js';
import * as fmt from './format.js';
import {POLL_MS, setCrumbs, setLive} from './layout.js';
import {
  attachCommand, gpuSummary, hostsOf, isLiveJob, lossText, rankOf, rankRange, sortedProcesses,
  stateBadge, stateCounts, stateLabel, stateOf,
} from './job_info.js';
import {jobVerdict, verdictCell} from './job_verdict.js';

// Summaries fetched for the verdict column: at most this many jobs, each again only when its
// event count changed (a finished job is asked once).
const MAX_SUMMARIES = 50;

export async function render(root, params, ctx) {
  setCrumbs({label: 'jobs', href: '#/'});
  const expanded = new Set();
  const verdicts = new Map();  // job id -> {events, verdict}
  const body = h('div', {});
  fill(root, h('section', {class: 'page jobs-page'},
    h('div', {class: 'page-head'}, h('h1', {}, 'Jobs'),
      h('p', {class: 'muted'}, 'Updates every ' + POLL_MS / 1000 + ' s. Click a job for its steps, findings and timeline.')),
    body));

  const draw = (answer) => {
    const jobs = [...(answer.jobs || [])].sort((a, b) =>
      Number(isLiveJob(b)) - Number(isLiveJob(a)) || num(b.last_seen_unix_ns) - num(a.last_seen_unix_ns));
    const live = jobs.filter(isLiveJob).length;
    setLive(live > 0, live ? live + ' live' : '');
    if (!jobs.length) {
      fill(body, h('div', {class: 'empty'},
        h('p', {}, 'No jobs yet. Profile a program and it shows up here:'),
        commandHint('gpuspy run -- python train.py'),
        h('p', {class: 'muted'}, 'or replay a synthetic one: ', h('code', {}, 'gpuspy-replay --job demo'))));
      return;
    }
    fill(body, h('table', {class: 'table jobs'},
      h('thead', {}, h('tr', {},
        ['', 'job', 'state', 'verdict', 'steady step', 'processes', 'ranks', 'hosts', 'GPUs', 'steps', 'events',
          'last seen', 'attach'].map((t) => h('th', {}, t)))),
      jobs.map((job) => jobRows(job, verdicts.get(job.job_id), expanded, () => draw(answer)))));
    fetchVerdicts(jobs, () => draw(answer));
  };

  let fetching = false;
  const fetchVerdicts = async (jobs, redraw) => {
    if (fetching) return;
    fetching = true;
    let changed = false;
    for (const job of jobs.slice(0, MAX_SUMMARIES)) {
      const known = verdicts.get(job.job_id);
      if (known && known.events === num(job.event_count)) continue;
      try {
        const summary = (await api.summary(job.job_id, ctx.signal)).summary;
        verdicts.set(job.job_id, {events: num(job.event_count), ...jobVerdict(summary)});
        changed = true;
      } catch (e) {
        if (ctx.signal.aborted) return;
        verdicts.set(job.job_id, {events: num(job.event_count), verdict: null});
      }
    }
    fetching = false;
    if (changed && !ctx.signal.aborted) redraw();
  };

  draw(await api.jobs(ctx.signal));
  ctx.every(POLL_MS, async () => draw(await api.jobs(ctx.signal)));
}

function jobRows(job, verdict, expanded, redraw) {
  const procs = sortedProcesses(job);
  const open = expanded.has(job.job_id);
  const href = '#/job/' + encodeURIComponent(job.job_id);
  const hosts = hostsOf(procs);
  const rows = [h('tr', {class: 'job-row', dataset: {job: job.job_id}},
    h('td', {}, h('button', {
      class: 'expander', type: 'button', title: open ? 'hide processes' : 'show processes',
      'aria-expanded': String(open),
      onclick: () => { open ? expanded.delete(job.job_id) : expanded.add(job.job_id); redraw(); },
    }, open ? '▾' : '▸')),
    h('td', {}, h('a', {href, class: 'job-link'}, job.job_id)),
    h('td', {}, stateCounts(job).map(([s, n]) => stateBadge(s, stateLabel(s, n)))),
    h('td', {class: 'verdict'}, verdictCell(verdict)),
    h('td', {class: 'num step-time'}, verdict && verdict.step_ns ? fmt.ms(verdict.step_ns) : '—'),
    h('td', {class: 'num process-count'}, procs.length),
    h('td', {}, rankRange(procs)),
    h('td', {title: hosts.join('\n')}, hosts.length > 2 ? hosts.length + ' hosts' : hosts.join(', ')),
    h('td', {}, gpuSummary(procs).join(', ') || '—'),
    h('td', {class: 'num step-count'}, fmt.count(num(job.step_count))),
    h('td', {class: 'num'}, fmt.count(num(job.event_count))),
    h('td', {title: fmt.dateTime(num(job.last_seen_unix_ns))}, fmt.ago(num(job.last_seen_unix_ns))),
    // Only a job with processes still connected can be attached to (imported and finished ones
    // cannot): no hint that would only fail.
    h('td', {}, isLiveJob(job) ? commandHint(attachCommand(job.job_id)) : h('span', {class: 'muted'}, '—')))];
  if (open) {
    rows.push(h('tr', {class: 'process-rows'}, h('td', {}), h('td', {colspan: 12},
      h('table', {class: 'table inner'},
        h('thead', {}, h('tr', {}, ['process', 'rank', 'host', 'pid', 'GPUs', 'state', 'mode', 'source', 'events', 'capture', 'last seen']
          .map((t) => h('th', {}, t)))),
        h('tbody', {}, procs.map((p) => h('tr', {},
          h('td', {class: 'num'}, p.process_id),
          h('td', {class: 'num'}, rankOf(p) >= 0 ? rankOf(p) : '—'),
          h('td', {}, p.identity.host || '?'),
          h('td', {class: 'num'}, p.identity.pid || '?'),
          h('td', {}, gpuSummary([p]).join(', ') || '—'),
          h('td', {}, stateBadge(stateOf(p), stateOf(p))),
          h('td', {}, modeText(p.mode)),
          h('td', {}, p.identity.source || ''),
          h('td', {class: 'num'}, fmt.count(num(p.event_count))),
          h('td', {class: lossText(p) ? 'warn' : 'muted'}, lossText(p) || 'complete'),
          h('td', {title: fmt.dateTime(num(p.last_seen_unix_ns))}, fmt.ago(num(p.last_seen_unix_ns))))))))));
  }
  return h('tbody', {}, rows);
}

// How the process traces: from its start, or only inside attach windows (GPUSPY_MODE=ondemand).
function modeText(mode) {
  if (mode === 'CAPTURE_MODE_CONTINUOUS') return 'always';
  if (mode === 'CAPTURE_MODE_DORMANT') return 'on demand';
  return '—';
}
