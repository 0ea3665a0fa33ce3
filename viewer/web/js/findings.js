// Findings: one step's as cards with evidence and fix, and a job's aggregated over its steps.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';
import {median} from './breakdown.js';

const SEVERITY_RANK = {info: 0, warning: 1, critical: 2};

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

// Per detector over the steady steps (all steps when none is steady yet): in how many steps it
// fired, and the time it costs per step on average over those steps — the figure to rank by,
// since a finding in every step costs more than a bigger one in a few.
export function aggregateFindings(reports) {
  const steady = reports.filter((r) => r.steady_state);
  const basis = steady.length ? steady : reports;
  const by = new Map();
  for (const r of basis) {
    for (const f of r.findings || []) {
      let a = by.get(f.detector);
      if (!a) by.set(f.detector, (a = {detector: f.detector, losts: [], severity: 'info', worst: null, worstLost: -1, fix_hint: f.fix_hint}));
      const lost = num(f.lost_ns);
      a.losts.push(lost);
      if ((SEVERITY_RANK[f.severity] || 0) > (SEVERITY_RANK[a.severity] || 0)) a.severity = f.severity;
      if (lost > a.worstLost) { a.worstLost = lost; a.worst = {report: r, finding: f}; }
    }
  }
  return [...by.values()].map((a) => ({
    detector: a.detector,
    severity: a.severity,
    steps: a.losts.length,
    of: basis.length,
    steadyOnly: steady.length > 0,
    lostPerStep: a.losts.reduce((x, y) => x + y, 0) / basis.length,
    medianLost: median(a.losts),
    title: a.worst.finding.title,
    fix_hint: a.fix_hint,
    worst: a.worst.report,
  })).sort((x, y) => y.lostPerStep - x.lostPerStep || (SEVERITY_RANK[y.severity] || 0) - (SEVERITY_RANK[x.severity] || 0));
}
