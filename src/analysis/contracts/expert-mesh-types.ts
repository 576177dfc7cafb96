// The program facts the expert-mesh proof reads (expert-mesh-average.ts, expert-mesh-dispatch.ts), gathered per
// file by expert-mesh-index.ts: kept apart so that the proof's files import them without importing each other.
import type { BackwardAverager } from './backward-placements';
import type { MeshBuilder } from './mesh-dims';
import type { FileSyntax } from './placement-syntax';
import type { DispatchStyle, StyleApplication, StyleSubclass } from './token-dispatch';

/** A dispatching style with the file that defines it. */
export type LocatedStyle = DispatchStyle & { readonly path: string };

export interface ProgramFacts {
  readonly averagers: readonly { path: string; item: BackwardAverager }[];
  readonly builders: readonly MeshBuilder[];
  readonly styles: ReadonlyMap<string, LocatedStyle>;
  readonly subclasses: ReadonlyMap<string, StyleSubclass>;
  readonly applications: readonly { path: string; item: StyleApplication; syntax: FileSyntax }[];
}
