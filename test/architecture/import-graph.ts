/**
 * The import graph of `src/`, read with TypeScript's own parser (no bundler, no guessing): every
 * `import`, `export ... from`, `import type`, `import('...')` call and `import('...').T` type names
 * an edge. Type-only and lazy imports count as edges too: they do not make a load-order circle,
 * but they do tie two files together as much as a value import, and the circles issue 44 item 7
 * broke were exactly of those kinds (store.ts -> `await import('./store-sqlite.js')`, the
 * emulator's command handlers -> `import type { CommandExecutor }`).
 *
 * Only our own files are nodes: bare specifiers (`node:fs`, `pg`) are not followed. A relative
 * `.js` specifier resolves to the `.ts` beside it, as `moduleResolution: NodeNext` does.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  from: string;
  to: string;
  /** `import type`, `export type`, or every named binding marked `type`. */
  typeOnly: boolean;
  /** `import('...')`, as a call or in a type position. */
  lazy: boolean;
}

export interface ImportGraph {
  /** Files, relative to the root given to `readImportGraph`, with `/` separators. */
  files: string[];
  edges: ImportEdge[];
  /** Relative specifiers that name no file: the guard must not go blind on a typo. */
  unresolved: { from: string; specifier: string }[];
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function resolveSpecifier(fromFile: string, specifier: string): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  const candidates = [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.mjs$/, '.mts'),
    base.replace(/\.jsx$/, '.tsx'),
    base,
  ];
  return candidates.find((path) => existsSync(path) && /\.(ts|tsx|mts|json)$/.test(path));
}

function allNamedTypeOnly(
  bindings: ts.NamedImportBindings | ts.NamedExportBindings | undefined,
): boolean {
  if (bindings === undefined || ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings))
    return false;
  return bindings.elements.length > 0 && bindings.elements.every((element) => element.isTypeOnly);
}

/** Every module specifier in one file, with how it is imported. */
export function importsOf(
  fileName: string,
  text: string,
): { specifier: string; typeOnly: boolean; lazy: boolean }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: { specifier: string; typeOnly: boolean; lazy: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined && allNamedTypeOnly(clause.namedBindings)));
      found.push({ specifier: node.moduleSpecifier.text, typeOnly, lazy: false });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      found.push({
        specifier: node.moduleSpecifier.text,
        typeOnly: node.isTypeOnly || allNamedTypeOnly(node.exportClause),
        lazy: false,
      });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteralLike(argument)) {
        found.push({ specifier: argument.text, typeOnly: false, lazy: true });
      }
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true, lazy: true });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

export function readImportGraph(root: string): ImportGraph {
  const name = (path: string) => relative(root, path).split(sep).join('/');
  const paths = sourceFiles(root).sort();
  const edges: ImportEdge[] = [];
  const unresolved: ImportGraph['unresolved'] = [];
  for (const path of paths) {
    for (const { specifier, typeOnly, lazy } of importsOf(path, readFileSync(path, 'utf8'))) {
      if (!specifier.startsWith('.')) continue;
      const target = resolveSpecifier(path, specifier);
      if (target === undefined) unresolved.push({ from: name(path), specifier });
      else if (!target.endsWith('.json'))
        edges.push({ from: name(path), to: name(target), typeOnly, lazy });
    }
  }
  return { files: paths.map(name), edges, unresolved };
}

/** Strongly connected components with more than one file (or a file importing itself). */
export function circles(nodes: string[], edges: { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>(nodes.map((node) => [node, []]));
  for (const { from, to } of edges) next.get(from)?.push(to);
  // Tarjan, iterative so a deep chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: { node: string; child: number }[] = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; child: number };
      const children = next.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++] as string;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) {
          low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(child) as number));
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined)
        low.set(
          parent.node,
          Math.min(low.get(parent.node) as number, low.get(frame.node) as number),
        );
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = (next.get(frame.node) ?? []).includes(frame.node);
        if (component.length > 1 || selfLoop) components.push(component.sort());
      }
    }
  }
  return components.sort((a, b) => (a[0] as string).localeCompare(b[0] as string));
}

/**
 * One shortest closed path through each file of a circle that starts from it, so a failure
 * names the arrows to cut (`a.ts -> b.ts -> a.ts`), not only the files caught in it.
 */
export function shortestLoop(
  component: string[],
  edges: { from: string; to: string }[],
  start: string,
): string[] {
  const inside = new Set(component);
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (inside.has(from) && inside.has(to)) next.set(from, [...(next.get(from) ?? []), to]);
  }
  const cameFrom = new Map<string, string>();
  const queue = [...(next.get(start) ?? [])];
  for (const node of queue) cameFrom.set(node, start);
  while (queue.length > 0) {
    const node = queue.shift() as string;
    if (node === start) break;
    for (const child of next.get(node) ?? []) {
      if (!cameFrom.has(child)) {
        cameFrom.set(child, node);
        queue.push(child);
      }
    }
  }
  const loop = [start];
  for (
    let node = cameFrom.get(start);
    node !== undefined && node !== start;
    node = cameFrom.get(node)
  )
    loop.unshift(node);
  return [start, ...loop];
}
