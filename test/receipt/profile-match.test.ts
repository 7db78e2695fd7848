/**
 * Proposing a profile from what a printer says (issue 41 item 2), over the shipped profiles: how
 * sure each answer makes the proposal, and the notes where the printer and the profile disagree.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadProfiles } from '../../src/receipt/profile.js';
import {
  type PrinterFacts,
  proposeProfile,
  widthFromModelName,
} from '../../src/receipt/profile-match.js';

const profiles = [...loadProfiles().values()];
const facts = (over: Partial<PrinterFacts>): PrinterFacts => ({
  manufacturer: null,
  model: null,
  answersStatus: true,
  autocutter: null,
  twoByteCharacters: null,
  ...over,
});

describe('proposeProfile', () => {
  it('every shipped profile with an identity is proposed as certain from its own names', () => {
    const named = profiles.filter((p) => p.identity !== undefined);
    assert.ok(named.length >= 2, 'the Epson profiles carry an identity');
    for (const p of named) {
      const proposal = proposeProfile(
        facts({ manufacturer: p.identity!.manufacturer, model: p.identity!.model }),
        profiles,
      );
      assert.equal(proposal.profile, p.id);
      assert.equal(proposal.confidence, 'certain');
    }
  });

  it('names match whatever their case, spaces and dashes', () => {
    const p = proposeProfile(facts({ manufacturer: 'Epson', model: 'tm t88vi' }), profiles);
    assert.equal(p.profile, 'epson-tm-t88vi');
    assert.equal(p.confidence, 'certain');
  });

  it('a known maker and the width, model unknown: likely, with the other fits listed', () => {
    const p = proposeProfile(
      facts({ manufacturer: 'EPSON', model: 'TM-T82X', widthMm: 80 }),
      profiles,
    );
    assert.equal(p.confidence, 'likely');
    assert.equal(p.profile, 'epson-tm-t20iii');
    assert.deepEqual(p.alternatives, ['epson-tm-t88vi']);
    assert.equal(p.widthFrom, 'option');
  });

  it('a known maker without a width: only possible, and it says how to tell the width', () => {
    const p = proposeProfile(facts({ manufacturer: 'EPSON', model: 'TM-m30' }), profiles);
    assert.equal(p.confidence, 'possible');
    assert.match(p.reason, /--width 58\|80/);
  });

  it('the width from a clone model name: the generic profile of that width, possible', () => {
    const p = proposeProfile(facts({ manufacturer: 'Xprinter', model: 'XP-58IIH' }), profiles);
    assert.equal(p.profile, 'generic-58mm');
    assert.equal(p.confidence, 'possible');
    assert.equal(p.widthFrom, 'model name');
  });

  it('a 58 mm clone reporting a CJK font and no cutter: the profile that has both', () => {
    const p = proposeProfile(
      facts({ widthMm: 58, autocutter: false, twoByteCharacters: true }),
      profiles,
    );
    assert.equal(p.profile, 'pos-5890-gb18030');
    assert.deepEqual(p.notes, []);
  });

  it('nothing: unknown, generic-80mm as a start, with notes where the printer disagrees', () => {
    const p = proposeProfile(facts({ answersStatus: false, autocutter: false }), profiles);
    assert.equal(p.profile, 'generic-80mm');
    assert.equal(p.confidence, 'unknown');
    assert.match(p.reason, /generic-80mm as a start/);
    assert.match(p.notes.join('\n'), /no autocutter/);
    assert.match(p.notes.join('\n'), /did not answer DLE EOT/);
  });
});

describe('widthFromModelName', () => {
  it('finds 58 and 80 standing alone or leading a clone number, and nothing in Epson names', () => {
    assert.equal(widthFromModelName('POS-58'), 58);
    assert.equal(widthFromModelName('POS-5890'), 58);
    assert.equal(widthFromModelName('XP-80C'), 80);
    assert.equal(widthFromModelName('Printer 80mm'), 80);
    assert.equal(widthFromModelName('TM-T88VI'), null);
    assert.equal(widthFromModelName('TM-T20III'), null);
    assert.equal(widthFromModelName('RP-800'), null);
    assert.equal(widthFromModelName(null), null);
  });
});
