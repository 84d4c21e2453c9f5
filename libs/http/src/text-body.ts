import { ArgumentMetadata, Injectable, PipeTransform } from '@nestjs/common';
import { ValidationFailed } from './errors';

/** The body of a `textBody` route that is not text castlog reads (see `decodeText`). It is refused
 * when the handler's parameters are resolved, after the route's guards, so that a request without
 * valid credentials answers 401 whatever its body. */
export class UndecodableText {
  constructor(readonly reason: string) {}
}

/** Refuses an `UndecodableText` body as input that fails validation. */
@Injectable()
export class RefuseUndecodableText implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'body' && value instanceof UndecodableText)
      throw new ValidationFailed(value.reason);
    return value;
  }
}
