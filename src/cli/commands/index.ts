// The table of CLI subcommands. Each lives in its own file; add one line here to register it.
import type { CliCommand } from '../command';
import { verifyCommand } from './verify';
import { simulateCommand } from './simulate';
import { sweepCommand } from './sweep';
import { runCommand } from './run';
import { importCommand } from './import';
import { compareCommand } from './compare';
import { calibrateCommand } from './calibrate';
import { checkCommand } from './check';
import { validateCommand } from './validate';
import { profileCommand } from './profile';

export const COMMANDS: CliCommand[] = [
  verifyCommand,
  simulateCommand,
  sweepCommand,
  runCommand,
  importCommand,
  compareCommand,
  calibrateCommand,
  validateCommand,
  checkCommand,
  profileCommand,
];
