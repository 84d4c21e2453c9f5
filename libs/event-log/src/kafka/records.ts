import { IHeaders, KafkaMessage } from 'kafkajs';
import { decodeRecord, EventHeaders } from '../codec/envelope.codec';
import { LogRecord } from '../event-log.port';

const header = (headers: IHeaders | undefined, name: string): string => {
  const value = headers?.[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? '' : first.toString();
};

/** A fetched message as the log's record, checked against its event's schema. */
export function toRecord(partition: number, message: KafkaMessage): LogRecord {
  const headers: EventHeaders = {
    type: header(message.headers, 'type'),
    version: Number(header(message.headers, 'version')),
    eventId: header(message.headers, 'eventId'),
    requestId: header(message.headers, 'requestId'),
  };
  return decodeRecord(headers, message.value?.toString() ?? 'null', {
    key: message.key?.toString() ?? '',
    partition,
    offset: Number(message.offset),
    timestamp: Number(message.timestamp),
  });
}
