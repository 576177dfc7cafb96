// Workspace Trust for the native engine. In an untrusted workspace nothing runs: no Python, no torchrun, no
// executable named by any setting. The simulated engine and the diagnostics read text only and keep working.
import { l10n } from './l10n';

export type NativeAvailability = { readonly allowed: true } | { readonly allowed: false; readonly reason: string };

/** Why Run on This Machine is off, in the display language (read when asked, after activation set it). */
export function untrustedReason(): string {
  return l10n.t(
    'Run on This Machine is disabled in this untrusted workspace: it starts Python and torch.distributed processes, and a workspace you do not trust must not run code. Trust the workspace (Manage Workspace Trust) to enable it. The simulated engine, code lenses and diagnostics keep working.',
  );
}

export function nativeAvailability(trusted: boolean): NativeAvailability {
  return trusted ? { allowed: true } : { allowed: false, reason: untrustedReason() };
}

/**
 * Where an executable setting was set, as `WorkspaceConfiguration.inspect` reports it. Only the user's own value
 * counts; a workspace or folder value is ignored (and reported) even though VS Code already ignores machine-scoped
 * settings there, because this is the line between "the user chose it" and "the repository chose it".
 */
export interface ExecutableInspection {
  readonly key: string;
  readonly globalValue?: unknown;
  readonly workspaceValue?: unknown;
  readonly workspaceFolderValue?: unknown;
}

export function executableFromSettings(inspection: ExecutableInspection): {
  path: string | undefined;
  ignored: string | undefined;
} {
  const path =
    typeof inspection.globalValue === 'string' && inspection.globalValue.trim()
      ? inspection.globalValue.trim()
      : undefined;
  const fromWorkspace = [inspection.workspaceValue, inspection.workspaceFolderValue].find(
    (v) => typeof v === 'string' && v.trim(),
  );
  const ignored =
    fromWorkspace !== undefined
      ? l10n.t(
          'Ignored {0} = {1} from the workspace settings: executables are taken only from your user settings.',
          inspection.key,
          JSON.stringify(fromWorkspace),
        )
      : undefined;
  return { path, ignored };
}
