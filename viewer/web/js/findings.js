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
    (f.evidence || []).length ? h('ul', {class: 'evidence'},
      f.evidence.map((e) => evidenceItem(e, onCallSite))) : null,
    f.fix_hint ? h('p', {class: 'fix'}, h('strong', {}, 'Fix: '), f.fix_hint) : null);
}
