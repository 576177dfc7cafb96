// The folders whose files are not the user's code (dependencies, virtual environments, build output, caches):
// `check` does not walk into them and the editor does not index or check them, so both surfaces analyse the same
// files of a folder and give the same findings. Hidden folders (`.git`, `.venv`, `.tox`) are skipped as well.
export const SKIPPED_FOLDER_NAMES: readonly string[] = [
  'node_modules',
  'venv',
  '__pycache__',
  'site-packages',
  'dist',
  'build',
];

/** True for a folder name that neither surface analyses. */
export function isSkippedFolder(name: string): boolean {
  return name.startsWith('.') || SKIPPED_FOLDER_NAMES.includes(name);
}

/** The same folders as a VS Code exclude pattern (`findFiles`). */
export const SKIPPED_FOLDERS_GLOB = `**/{${[...SKIPPED_FOLDER_NAMES, '.*'].join(',')}}/**`;
