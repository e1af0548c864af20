import { interviewSuite } from './interview-suite.ts';

/**
 * The end-to-end interview (interview-suite.ts) in LiveKit rooms: both workers run with
 * ROOM_PROVIDER=livekit against a livekit-server started on loopback, and Chromium joins with
 * livekit-client, its fake microphone publishing over WebRTC.
 */
interviewSuite('livekit');
