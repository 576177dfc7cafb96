// Loaded with --import into each CLI run of the hostile round: on exit it writes the process's peak resident
// memory (kilobytes) where the round asked, so a case can hold the CLI to a memory bound.
import { writeFileSync } from 'node:fs';

process.on('exit', () => {
  const file = process.env.CP_HOSTILE_RSS_FILE;
  if (!file) return;
  try {
    writeFileSync(file, String(process.resourceUsage().maxRSS));
  } catch {
    // The round then reports the run as killed; nothing else to do here.
  }
});
