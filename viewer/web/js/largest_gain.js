// The job's one change with the largest expected gain (JobSummary.largest_gain): the detector
// whose findings lose the most time over the steady steps, and its fix.
import {h} from './dom.js';
import {num} from './api.js';
import * as fmt from './format.js';

export function largestGain(gain) {
  if (!gain || !gain.detector) return null;
  return h('div', {class: 'largest-gain'},
    h('p', {}, h('strong', {}, 'Largest expected gain: '), h('code', {}, gain.detector),
      ` — ~${fmt.ms(num(gain.lost_per_step_ns))} per steady step (found in ${fmt.count(num(gain.steps))} of them)`),
    gain.fix_hint ? h('p', {class: 'muted'}, gain.fix_hint) : null);
}
