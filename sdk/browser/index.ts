/** The browser client SDK, bundled as an ES module and served by the api-stub at /sdk/browser.js. */
export { createServiceClient, ServiceError } from './client.ts';
export type { ClientOptions, ConnectInput, ConnectedRoom, CreateSessionInput, CreatedSession, ServiceClient } from './client.ts';
export type { MountOptions, MountedSession } from './iframe.ts';
export { SERVICE_EVENTS, isServiceEvent } from './events.ts';
export type { ServiceEvent, ServiceEventName } from './events.ts';
