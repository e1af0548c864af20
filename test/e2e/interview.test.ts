import { interviewSuite } from './interview-suite.ts';

/** The end-to-end interview (interview-suite.ts) in the workers' own local WebSocket rooms. */
interviewSuite('local');
