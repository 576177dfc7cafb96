// What the `collectiveProfiler.system` setting names: a preset or a system file. Pure, so the status bar text and
// the quick pick are tested without VS Code.
import { l10n } from './l10n';

export type SystemChoice =
  { readonly kind: 'preset'; readonly name: string } | { readonly kind: 'file'; readonly path: string };

/** A value with a path separator or a YAML/JSON extension is a file; anything else must be a preset name. */
export function parseSystemChoice(value: string): SystemChoice {
  const v = value.trim();
  if (/[\\/]/.test(v) || /\.(ya?ml|json)$/i.test(v)) return { kind: 'file', path: v };
  return { kind: 'preset', name: v.toLowerCase() };
}

/**
 * The status bar text: the resolved system's own label, which already says how many nodes there are ("2×8 H100
 * NVSwitch + 8×400G IB"), so the node count is not added a second time.
 */
export function statusBarText(label: string, ok: boolean): string {
  if (!ok) return l10n.t('$(warning) No system');
  return `$(server) ${label}`;
}

export interface SystemPickItem {
  readonly label: string;
  readonly description: string;
  readonly value: string;
  readonly picked: boolean;
}

/** Quick pick entries: every preset with its resolved label, the current one first and marked. */
export function systemPickItems(
  presets: readonly { name: string; label: string }[],
  current: string,
): SystemPickItem[] {
  const items = presets.map((p) => ({
    label: p.name,
    description: p.label,
    value: p.name,
    picked: p.name === current.toLowerCase(),
  }));
  return [...items.filter((i) => i.picked), ...items.filter((i) => !i.picked)];
}
