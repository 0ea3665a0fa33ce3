// Compare: why run B is slower (or faster) than run A — two jobs, two ranks of a job, or two
// step ranges — from /api/diff (the same answer as `gpuspy diff`): step times with their noise,
// the parts of the step that changed, the verdicts, and the changes that add up to the difference.
import {api, num} from './api.js';
import {h, fill, commandHint} from './dom.js';
import * as fmt from './format.js';
import {setCrumbs} from './layout.js';
import {shellQuote} from './job_info.js';

const PART_LABELS = {
  compute: 'GPU computing', exposed_comm: 'communication, nothing else running',
  idle_sync: 'GPU idle: host blocked on the GPU', idle_launch: 'GPU idle: host launching',
  idle_input: 'GPU idle: input pipeline', idle_host: 'GPU idle: other host work',
  idle_cuda_call: 'GPU idle: host inside CUDA calls',
};

const signedMs = (ns) => (ns > 0 ? '+' : ns < 0 ? '−' : '') + fmt.ms(Math.abs(ns));

export async function render(root, {a, b}, ctx) {
  setCrumbs({label: 'jobs', href: '#/'}, {label: 'compare'});
  const inputA = h('input', {type: 'text', name: 'a', value: a || '', placeholder: 'job, job@rank, job:100-200'});
  const inputB = h('input', {type: 'text', name: 'b', value: b || '', placeholder: 'job, job@rank, job:100-200'});
  const go = (e) => {
    e.preventDefault();
    location.hash = diffHref(inputA.value.trim(), inputB.value.trim());
  };
  const result = h('div', {id: 'diff-result'});
  fill(root, h('section', {class: 'page diff-page'},
    h('div', {class: 'page-head'}, h('h1', {}, 'Compare runs')),
    h('section', {class: 'card'},
      h('form', {class: 'export-form', onsubmit: go},
        h('label', {}, 'A ', inputA), h('label', {}, 'B ', inputB),
        h('button', {type: 'submit', class: 'button primary'}, 'Compare')),
      h('p', {class: 'muted'}, 'A side is a job id, optionally @rank and :steps (N, A-B, A-, -B). ' +
        'Steady steps are compared; warm-up is left out.')),
    result));
  if (!a || !b) return;
  fill(result, h('p', {class: 'loading'}, 'Comparing…'));
  const d = await api.diff(a, b, ctx.signal);
  fill(result, diffView(d, a, b));
}

export function diffHref(a, b) {
  return '#/diff?a=' + encodeURIComponent(a) + '&b=' + encodeURIComponent(b);
}

function diffView(d, a, b) {
  const sa = d.a || {}, sb = d.b || {};
  const median = num(d.median_delta_ns);
  const noise = Math.hypot(num(sa.noise_ns), num(sb.noise_ns));
  const headline = median === 0 ? "B's median step time is A's"
    : 'B is ' + (median > 0 ? 'slower' : 'faster') + ' by ' + fmt.ms(Math.abs(median)) + ' per step (' +
      (median > 0 ? '+' : '−') + (100 * Math.abs(d.median_delta_fraction || 0)).toFixed(1) + '%)';
  const noiseText = d.within_noise ? ': within the noise (± ' + fmt.ms(noise) + ')'
    : noise > 0 ? ', beyond the noise (± ' + fmt.ms(noise) + ')' : '';
  const side = (name, label, s) => h('tr', {},
    h('td', {}, name), h('td', {}, label), h('td', {class: 'num'}, num(s.steps)),
    h('td', {class: 'num'}, fmt.ms(num(s.median_ns))), h('td', {class: 'num'}, fmt.ms(num(s.p90_ns))),
    h('td', {class: 'num'}, fmt.ms(num(s.mean_ns))), h('td', {class: 'num'}, num(s.noise_ns) ? fmt.ms(num(s.noise_ns)) : '—'));
  const parts = (d.parts || []).filter((p) => num(p.a_ns) || num(p.b_ns));
  const contributions = d.contributions || [];
  const realised = d.realised || [];
  const together = d.realised_together;
  const gain = (ns) => signedMs(-num(ns));
  const pct = (f) => (100 * (f || 0)).toFixed(0) + '%';
  return [
    h('section', {class: 'card'},
      h('p', {class: 'diff-headline', id: 'diff-headline'}, headline + noiseText),
      (d.notes || []).map((n) => h('p', {class: 'muted'}, 'note: ' + n)),
      h('table', {class: 'table'},
        h('thead', {}, h('tr', {}, ['', 'run', 'steps', 'median', 'p90', 'mean', '±'].map((t) => h('th', {}, t)))),
        h('tbody', {}, side('A', d.a_label, sa), side('B', d.b_label, sb)))),
    h('section', {class: 'card'}, h('h2', {}, 'Where the step goes (mean per step)'),
      h('table', {class: 'table', id: 'diff-parts'},
        h('thead', {}, h('tr', {}, ['', 'A', 'B', 'change'].map((t) => h('th', {}, t)))),
        h('tbody', {}, parts.map((p) => h('tr', {},
          h('td', {}, PART_LABELS[p.part] || p.part), h('td', {class: 'num'}, fmt.ms(num(p.a_ns))),
          h('td', {class: 'num'}, fmt.ms(num(p.b_ns))), h('td', {class: 'num'}, signedMs(num(p.delta_ns)))))))),
    realised.length ? h('section', {class: 'card'}, h('h2', {}, 'Fixed since A: predicted and realised'),
      h('p', {class: 'muted'}, "Predicted: A's what-if replay. Realised: the change of the median step, all of it."),
      h('ul', {id: 'diff-realised'}, realised.map((g) => h('li', {dataset: {detector: g.detector}},
        h('strong', {}, g.detector), ': predicted ' + gain(g.predicted_gain_ns) +
          (g.predicted_by_replay ? '' : ' (idle attributed, not replayed)') + ', realised ' +
          gain(g.realised_gain_ns) + ' (' + pct(g.realised_fraction) + ')' +
          (g.still_present_share ? '; still in ' + pct(g.still_present_share) + " of B's steps" : '')))),
      together ? h('p', {}, num(together.fixes) + ' fixes together: predicted ' + gain(together.predicted_gain_ns) +
        (together.predicted_basis === 'all_fixes_replay' ? " (A's all-fixes replay)" : ' (sum of the single predictions)') +
        ', realised ' + gain(together.realised_gain_ns) + ' (' + pct(together.realised_fraction) + ')') : null,
      h('p', {}, "B's primary now: " + (realised[0].new_primary || '—'))) : null,
    h('section', {class: 'card'}, h('h2', {}, 'What changed (adds up to the mean change, ' + signedMs(num(d.mean_delta_ns)) + ')'),
      h('ol', {class: 'diff-contributions', id: 'diff-contributions'}, contributions.map((c) => h('li', {dataset: {kind: c.kind}},
        h('span', {class: 'delta num'}, signedMs(num(c.delta_ns))), ' ',
        h('strong', {}, c.kind === 'other' ? 'other' : c.subject), ' ', h('span', {class: 'muted'}, c.kind),
        h('div', {class: 'detail'}, c.detail))))),
    h('section', {class: 'card'}, h('h2', {}, 'Verdicts (steps, A → B)'),
      h('p', {}, (d.verdicts || []).map((v) => v.detector + ' ' + num(v.a_steps) + ' → ' + num(v.b_steps)).join(', ') || '—')),
    h('p', {}, 'Same from the command line: ', commandHint('gpuspy diff ' + shellQuote(a) + ' ' + shellQuote(b))),
  ];
}
