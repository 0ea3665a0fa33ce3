// Findings: one step's as cards with evidence and fix. A job's, aggregated over its steps, come
// from the analysis (JobSummary.findings).
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';

export function severityBadge(severity) {
  return h('span', {class: 'badge sev sev-' + (severity || 'info')}, severity || 'info');
}

// One evidence line. A fact about a call site (evidence.call_site) links to that site's calls on
// the step's timeline when the page has one (onCallSite).
function evidenceItem(e, onCallSite) {
  const site = e.call_site && onCallSite
    ? h('button', {type: 'button', class: 'call-site-link', title: 'show these calls on the timeline (again: the next one)',
      dataset: {site: e.call_site}, onclick: () => onCallSite(e.call_site)}, 'on the timeline')
    : null;
  return h('li', {}, h('span', {class: 'key'}, e.key), ' ', h('span', {class: 'value'}, e.value), site ? ' ' : null, site);
}

// The what-if replay's fields in words (the CLI and the HTML report phrase them the same way:
// analysis/replay/what_if_text.cc).
const minusPercent = (fraction) => '-' + Math.round(Number(fraction || 0) * 100) + '%';
export function whatIfLine(w) {
  return 'would take ' + fmt.ms(num(w.step_ns)) + ' without it (' + minusPercent(w.gain_fraction) + '): ' + (w.fix || '');
}
export function replayLine(r) {
  if (!r || !num(r.recorded_ns)) return '';
  if (!r.available) {
    return 'gains unavailable: ' + (r.unavailable_reason || '') + '; lost times are the idle time attributed to each cause';
  }
  return 'all fixes together: ' + fmt.ms(num(r.all_fixes_ns)) + ' (' + minusPercent(r.all_fixes_gain_fraction) + ')';
}

// onCallSite(site): called when a call-site link of the evidence is clicked (step page).
export function findingCard(f, wallNs, {onCallSite} = {}) {
  const lost = num(f.lost_ns);
  return h('article', {class: 'finding finding-' + (f.severity || 'info'), dataset: {detector: f.detector}},
    h('header', {},
      severityBadge(f.severity),
      h('code', {class: 'detector'}, f.detector),
      lost > 0 ? h('span', {class: 'lost'}, '~' + fmt.ms(lost) + ' lost' +
        (wallNs ? ' (' + fmt.pct(lost / wallNs) + ' of the step)' : '')) : null),
    h('p', {class: 'title'}, f.title),
    f.what_if ? h('p', {class: 'what-if', dataset: {gainNs: String(num(f.what_if.gain_ns))}}, h('strong', {}, 'What if: '), whatIfLine(f.what_if)) : null,
    ...(f.partial_fixes || []).map((p) => h('p', {class: 'what-if partial'}, h('strong', {}, 'Partly: '), whatIfLine(p))),
    (f.evidence || []).length ? h('ul', {class: 'evidence'},
      f.evidence.map((e) => evidenceItem(e, onCallSite))) : null,
    f.fix_hint ? h('p', {class: 'fix'}, h('strong', {}, 'Fix: '), f.fix_hint) : null);
}
