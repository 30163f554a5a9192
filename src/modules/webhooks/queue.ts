import type { Clock } from '../../lib/clock.js';
import type { Db } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { parseJson } from '../../lib/json.js';
import type { EventListener } from '../events/writer.js';
import { webhookDeliveryRepository, webhookEndpointRepository, type WebhookDeliveryRow } from './repository.js';

/** An event as a delivery carries it. */
export interface DeliverableEvent {
  id: string;
  workspace_id: string;
  type: string;
  created_at: string;
  data: object;
}

/** A new pending delivery of an event to one endpoint: the body is fixed now, so every retry sends the same bytes. */
export function deliveryOf(event: DeliverableEvent, endpointId: string, now: Date): WebhookDeliveryRow {
  const at = now.toISOString();
  return {
    id: newId('webhookDelivery', now.getTime()),
    workspace_id: event.workspace_id,
    endpoint_id: endpointId,
    event_id: event.id,
    event_type: event.type,
    payload: JSON.stringify({ type: event.type, timestamp: event.created_at, data: event.data }),
    state: 'pending',
    attempts: 0,
    run_after: at,
    locked_until: null,
    last_status: null,
    last_error: null,
    created_at: at,
    updated_at: at,
  };
}

/** Queues `event` for every enabled endpoint of its workspace subscribed to its type (or to "*"); how many. */
export async function queueDeliveries(trx: Db, event: DeliverableEvent, now: Date): Promise<number> {
  const endpoints = await webhookEndpointRepository.enabled(trx, event.workspace_id);
  const subscribed = endpoints.filter((endpoint) => {
    const types = parseJson<string[]>(endpoint.events, []);
    return types.includes('*') || types.includes(event.type);
  });
  await webhookDeliveryRepository.insert(trx, subscribed.map((endpoint) => deliveryOf(event, endpoint.id, now)));
  return subscribed.length;
}

/**
 * The event listener that queues webhook deliveries in the transaction of the event ("queued with the
 * event": the change, its event and its deliveries commit together), then wakes the job runner.
 */
export function webhookQueue(clock: Clock, wake: () => void = () => undefined): EventListener {
  return async (trx, event) => {
    if ((await queueDeliveries(trx, event, clock.now())) > 0) wake();
  };
}
