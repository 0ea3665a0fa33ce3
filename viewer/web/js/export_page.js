// Export: the job, one rank, or a range of steps as a Chrome/Perfetto trace (the same file as
// `gpuspy export`), downloaded straight from the collector.
import {api, num} from './api.js';
import {h, fill, commandHint} from './dom.js';
import {setCrumbs} from './layout.js';
import {processLabel, shellQuote, sortedProcesses} from './job_info.js';

export async function render(root, {job: jobId}, ctx) {
  const jobHref = '#/job/' + encodeURIComponent(jobId);
  setCrumbs({label: 'jobs', href: '#/'}, {label: jobId, href: jobHref}, {label: 'export'});
  const [jobs, steps] = await Promise.all([api.jobs(ctx.signal), api.steps(jobId, undefined, ctx.signal)]);
  const job = (jobs.jobs || []).find((j) => j.job_id === jobId);
  if (!job) throw new Error("unknown job '" + jobId + "'");
  const numbers = (steps.steps || []).map((s) => num(s.number));
  const lo = numbers.length ? Math.min(...numbers) : 0, hi = numbers.length ? Math.max(...numbers) : 0;

  const process = h('select', {name: 'process'},
    h('option', {value: ''}, 'all processes'),
    sortedProcesses(job).map((p) => h('option', {value: p.process_id}, processLabel(p))));
  const whole = h('input', {type: 'checkbox', name: 'whole', checked: true});
  const from = h('input', {type: 'number', name: 'from', min: lo, max: hi, value: lo});
  const to = h('input', {type: 'number', name: 'to', min: lo, max: hi, value: hi});
  const link = h('a', {class: 'button primary', id: 'export-download'}, 'Download trace');
  const cli = h('div', {});
  const error = h('p', {class: 'error-text'});

  const update = () => {
    from.disabled = to.disabled = whole.checked;
    const a = Number(from.value), b = Number(to.value);
    const bad = !whole.checked && !(Number.isInteger(a) && Number.isInteger(b) && a >= 0 && a <= b);
    error.textContent = bad ? 'steps: from must be a whole number no larger than to' : '';
    link.classList.toggle('disabled', bad);
    const steps = whole.checked ? undefined : a + '-' + b;
    link.href = bad ? '#' : api.traceUrl(jobId, {process: process.value, steps});
    link.download = traceFileName(jobId, steps, process.value);
    fill(cli, 'Same from the command line: ', commandHint('gpuspy export --job ' + shellQuote(jobId) +
      (steps ? ' --steps ' + steps : '') + (process.value ? ' --process ' + process.value : '') + ' -o ' + link.download));
  };
  for (const el of [process, whole, from, to]) el.addEventListener('input', update);
  link.addEventListener('click', (e) => { if (link.classList.contains('disabled')) e.preventDefault(); });
  update();

  fill(root, h('section', {class: 'page export-page'},
    h('div', {class: 'page-head'}, h('h1', {}, 'Export ', h('span', {class: 'job-id'}, jobId))),
    h('section', {class: 'card'},
      h('p', {}, 'A Chrome / Perfetto trace JSON: one track per host thread and CUDA stream per rank, launch → kernel arrows, ' +
        'a "gpuspy steps" track with every step\'s verdict and findings. ' + numbers.length + ' steps recorded (' +
        (numbers.length ? 'numbers ' + lo + '–' + hi : 'none yet') + ').'),
      h('form', {class: 'export-form', onsubmit: (e) => e.preventDefault()},
        h('label', {}, 'Processes ', process),
        h('label', {}, whole, ' every step'),
        h('label', {}, 'steps from ', from), h('label', {}, 'to ', to)),
      error,
      h('p', {}, link),
      cli,
      perfettoHint())));
}

// The name gpuspyd gives the download too (Content-Disposition wins over the download attribute).
export function traceFileName(jobId, steps, process) {
  return (jobId + (steps ? '-steps-' + steps : '') + (process ? '-p' + process : '')).replace(/[^A-Za-z0-9._-]/g, '_') + '.trace.json';
}

export function perfettoHint() {
  return h('p', {class: 'muted perfetto-hint'}, 'Open in Perfetto: go to ',
    h('a', {href: 'https://ui.perfetto.dev', target: '_blank', rel: 'noopener'}, 'ui.perfetto.dev'),
    ', choose "Open trace file" and pick the downloaded .json (or drop it on the page). chrome://tracing reads it too, and ',
    h('code', {}, 'gpuspy import'), ' reads it back.');
}
