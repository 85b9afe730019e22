#!/usr/bin/env node
// The entry of `prefork`: a stop signal that comes while the CLI loads (a
// few hundred ms of modules) is held before anything else loads, so that a
// node stopped that early stops in order rather than dying of the signal.
import { holdSignals } from './held-signals.js';

holdSignals();
await import('./run.js');
