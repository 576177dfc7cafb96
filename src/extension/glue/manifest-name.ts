// Which documents are package manifests (requirements*.txt, setup.cfg, pyproject.toml): an edit to one changes the
// library versions the gradient-scaling analysis reads. The same test as the analysis' `isManifest`
// (analysis/contracts/versions.ts), kept here because activation may not load the analysis; a unit test checks
// that the two agree.
export function isManifestFileName(fileName: string): boolean {
  const file = fileName.split(/[\\/]/).pop() ?? '';
  return /^requirements[\w.-]*\.txt$/i.test(file) || file === 'setup.cfg' || file === 'pyproject.toml';
}
