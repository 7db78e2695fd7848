/**
 * The import graph of `src/` stays one-way (docs/architecture.md "One pipeline, one direction",
 * issue 44: "0 upward arrows and 0 circles"):
 *
 * - no circle between files, counting type-only and lazy imports (import-graph.ts says why);
 * - no circle between rooms (a room: a folder of `src/`, or a file at its top: `agent.ts`);
 * - no arrow from a room to a room of a higher layer.
 *
 * The layers are the rooms table of docs/architecture.md read bottom-up, with what the code has
 * grown since: the shared plumbing (errors, logging, host...) at the bottom; `config/` above the
 * rooms whose options it validates (issue 44 item 6 derives the settings from the rooms' option
 * types), not beside `protocol/` as the table has it; `console/` (the status page, not in the
 * table) between `config/` and the composition root. Rooms of one layer may import each other,
 * one way: the room circle check keeps that honest. A room missing from `LAYERS` fails the test,
 * so a new room is placed on purpose.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { circles, importsOf, readImportGraph, shortestLoop } from './import-graph.js';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** Bottom first: a room may import its own layer's rooms and those below, never above. */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'logging', 'package-root', 'version', 'host', 'systemd-notify'],
  ['protocol'],
  ['receipt', 'printer', 'emulator', 'order-service'],
  ['jobs', 'demo'],
  ['mqtt', 'catchup'],
  ['config'],
  ['console'],
  ['agent'],
  ['cli'],
];

const roomOf = (file: string) =>
  file.includes('/') ? file.split('/')[0]! : file.replace(/\.ts$/, '');
const layerOf = new Map(
  LAYERS.flatMap((rooms, layer) => rooms.map((room) => [room, layer] as const)),
);

const describeEdge = (e: { from: string; to: string; typeOnly: boolean; lazy: boolean }) =>
  `${e.from} -> ${e.to}${e.typeOnly ? ' (type)' : ''}${e.lazy ? ' (lazy)' : ''}`;

describe('the import graph of src/', () => {
  const graph = readImportGraph(SRC);

  it('resolves every relative import (the guard is not blind to a file)', () => {
    assert.ok(graph.files.length > 100, `only ${graph.files.length} files read from ${SRC}`);
    assert.deepEqual(graph.unresolved, []);
  });

  it('has no circle between files', () => {
    const found = circles(graph.files, graph.edges).map((files) => {
      const loop = shortestLoop(files, graph.edges, files[0]!);
      return `${files.length} files (${files.join(', ')}), e.g. ${loop.join(' -> ')}`;
    });
    assert.deepEqual(found, [], `import circles:\n${found.join('\n')}`);
  });

  it('places every room on a layer', () => {
    const rooms = [...new Set(graph.files.map(roomOf))].sort();
    assert.deepEqual(
      rooms.filter((room) => !layerOf.has(room)),
      [],
      'rooms missing from LAYERS',
    );
  });

  it('has no arrow to a higher layer', () => {
    const upward = graph.edges
      .filter((e) => (layerOf.get(roomOf(e.to)) ?? 0) > (layerOf.get(roomOf(e.from)) ?? 0))
      .map(describeEdge);
    assert.deepEqual(upward, [], `upward arrows:\n${upward.join('\n')}`);
  });

  it('has no circle between rooms', () => {
    const rooms = [...new Set(graph.files.map(roomOf))];
    const between = graph.edges
      .map((e) => ({ from: roomOf(e.from), to: roomOf(e.to) }))
      .filter((e) => e.from !== e.to);
    const found = circles(rooms, between).map((members) => {
      const loop = shortestLoop(members, between, members[0]!);
      const arrows = loop.slice(1).map((to, i) => {
        const from = loop[i]!;
        const files = graph.edges.filter((e) => roomOf(e.from) === from && roomOf(e.to) === to);
        return `${from} -> ${to}: ${files.map(describeEdge).join(', ')}`;
      });
      return arrows.join('\n');
    });
    assert.deepEqual(found, [], `room circles:\n${found.join('\n\n')}`);
  });
});

describe('the import graph reader', () => {
  it('sees every kind of import, and tells type-only and lazy ones', () => {
    const text = [
      "import a from './a.js';",
      "import type { B } from './b.js';",
      "import { type C, type D } from './c.js';",
      "import { type E, f } from './e.js';",
      "export * from './g.js';",
      "export type { H } from './h.js';",
      "const i = await import('./i.js');",
      "let j: import('./j.js').J;",
      "import 'node:fs';",
    ].join('\n');
    assert.deepEqual(importsOf('x.ts', text), [
      { specifier: './a.js', typeOnly: false, lazy: false },
      { specifier: './b.js', typeOnly: true, lazy: false },
      { specifier: './c.js', typeOnly: true, lazy: false },
      { specifier: './e.js', typeOnly: false, lazy: false },
      { specifier: './g.js', typeOnly: false, lazy: false },
      { specifier: './h.js', typeOnly: true, lazy: false },
      { specifier: './i.js', typeOnly: false, lazy: true },
      { specifier: './j.js', typeOnly: true, lazy: true },
      { specifier: 'node:fs', typeOnly: false, lazy: false },
    ]);
  });

  it('finds circles and a shortest loop through each', () => {
    const edges = [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
      { from: 'c', to: 'a' },
      { from: 'c', to: 'b' },
      { from: 'c', to: 'd' },
      { from: 'e', to: 'e' },
    ];
    const found = circles(['a', 'b', 'c', 'd', 'e'], edges);
    assert.deepEqual(found, [['a', 'b', 'c'], ['e']]);
    assert.deepEqual(shortestLoop(found[0]!, edges, 'b'), ['b', 'c', 'b']);
    assert.deepEqual(shortestLoop(found[0]!, edges, 'a'), ['a', 'b', 'c', 'a']);
    assert.deepEqual(shortestLoop(found[1]!, edges, 'e'), ['e', 'e']);
  });
});
