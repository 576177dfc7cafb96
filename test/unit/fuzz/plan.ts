// How many inputs each fuzz target gets in CI (`npm test`). The sum is checked to stay at or above 10,000; the
// analysis target gets few and small inputs because parsing Python is the slowest step. `npm run fuzz` scales
// every entry (FUZZ_SCALE).
export const FUZZ_PLAN = {
  systemMutated: 900,
  systemGenerated: 700,
  trainingMutated: 1000,
  trainingGenerated: 700,
  deepSpeedRule: 300,
  rawDocuments: 800,
  ncclTestsMutated: 900,
  ncclTestsGenerated: 500,
  ncclLogMutated: 500,
  ncclLogGenerated: 300,
  deepSpeedLogMutated: 300,
  calibrationMutated: 300,
  kinetoMutated: 500,
  kinetoEvents: 600,
  chromeTrace: 400,
  gzip: 150,
  pythonMutated: 160,
  pythonGenerated: 100,
  webviewMessages: 1500,
  panelState: 300,
  workspacePaths: 300,
} as const;

export const CI_MINIMUM_INPUTS = 10_000;

export function plannedTotal(): number {
  return Object.values(FUZZ_PLAN).reduce((a, b) => a + b, 0);
}
