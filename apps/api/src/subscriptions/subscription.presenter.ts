import { AddedItem, FailedItem, toIso, UpdatedFields } from '@castlog/domain';
import { SubscriptionView } from '@castlog/read-model';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class SubscriptionBody {
  @ApiProperty({ format: 'url' }) feed_url!: string;
  @ApiProperty({ format: 'uuid' }) guid!: string;
  @ApiProperty() is_subscribed!: boolean;
  @ApiPropertyOptional({ format: 'date-time' }) subscription_changed?: string;
  @ApiPropertyOptional({ format: 'uuid' }) new_guid?: string;
  @ApiPropertyOptional({ format: 'date-time' }) guid_changed?: string;
  @ApiPropertyOptional({ format: 'date-time' }) deleted?: string;
}

export class AddedItemBody {
  @ApiProperty({ format: 'url' }) feed_url!: string;
  @ApiProperty({ format: 'uuid' }) guid!: string;
  @ApiProperty() is_subscribed!: boolean;
  @ApiProperty({ format: 'date-time' }) subscription_changed!: string;
}

export class FailedItemBody {
  @ApiProperty({ description: 'The feed_url as sent (need not be a valid URL)' }) feed_url!: string;
  @ApiProperty() message!: string;
}

export class AddResultBody {
  @ApiProperty({ type: [AddedItemBody] }) success!: AddedItemBody[];
  @ApiProperty({ type: [FailedItemBody] }) failure!: FailedItemBody[];
}

export class UpdateResultBody {
  @ApiPropertyOptional({ format: 'url' }) new_feed_url?: string;
  @ApiPropertyOptional() is_subscribed?: boolean;
  @ApiPropertyOptional({ format: 'date-time' }) subscription_changed?: string;
  @ApiPropertyOptional({ format: 'uuid' }) new_guid?: string;
  @ApiPropertyOptional({ format: 'date-time' }) guid_changed?: string;
}

export class SubscriptionPageBody {
  @ApiProperty() total!: number;
  @ApiProperty() page!: number;
  @ApiProperty() per_page!: number;
  @ApiPropertyOptional({ format: 'url' }) next?: string;
  @ApiPropertyOptional({ format: 'url' }) previous?: string;
  @ApiProperty({ type: [SubscriptionBody] }) subscriptions!: SubscriptionBody[];
}

export function presentAdded(success: readonly AddedItem[], failure: readonly FailedItem[]): AddResultBody {
  // The items one add changed share its instant: each instant is written out once, not once an
  // item (a POST of 100 feeds would format the same date 100 times on the API's thread).
  let instant = NaN;
  let iso = '';
  const isoOf = (changed: number) =>
    changed === instant ? iso : ((instant = changed), (iso = toIso(changed)));
  return {
    success: success.map((item) => ({
      feed_url: item.feedUrl,
      guid: item.guid,
      is_subscribed: item.isSubscribed,
      subscription_changed: isoOf(item.subscriptionChanged),
    })),
    failure: failure.map((item) => ({ feed_url: item.feedUrl, message: item.message })),
  };
}

export function presentUpdated(changed: UpdatedFields): UpdateResultBody {
  const body: UpdateResultBody = {};
  if (changed.newFeedUrl !== undefined) body.new_feed_url = changed.newFeedUrl;
  if (changed.isSubscribed !== undefined) body.is_subscribed = changed.isSubscribed;
  if (changed.subscriptionChanged !== undefined)
    body.subscription_changed = toIso(changed.subscriptionChanged);
  if (changed.newGuid !== undefined) body.new_guid = changed.newGuid;
  if (changed.guidChanged !== undefined) body.guid_changed = toIso(changed.guidChanged);
  return body;
}

/** A PATCH's answer when nothing changed: the latest guid and when it was taken, if ever. */
export function presentGuid(view: SubscriptionView): UpdateResultBody {
  return {
    new_guid: view.newGuid ?? view.guid,
    ...(view.guidChanged !== null ? { guid_changed: toIso(view.guidChanged) } : {}),
  };
}

export function presentSubscription(view: SubscriptionView): SubscriptionBody {
  const body: SubscriptionBody = {
    feed_url: view.feedUrl,
    guid: view.guid,
    is_subscribed: view.isSubscribed,
    subscription_changed: toIso(view.subscriptionChanged),
  };
  if (view.guidChanged !== null) body.guid_changed = toIso(view.guidChanged);
  if (view.newGuid !== null) body.new_guid = view.newGuid;
  if (view.deleted !== null) body.deleted = toIso(view.deleted);
  return body;
}
