import { DeletionStatus } from '@castlog/domain';
import { ApiProperty } from '@nestjs/swagger';

export const DELETION_RECEIVED = 'Deletion request was received and will be processed';

export const DELETION_MESSAGES: Readonly<Record<DeletionStatus, string>> = {
  PENDING: 'Deletion is pending',
  SUCCESS: 'Subscription deleted successfully',
  FAILURE: 'The deletion process encountered an error and was rolled back',
};

export class DeletionReceiptBody {
  @ApiProperty({ type: 'integer' }) deletion_id!: number;
  @ApiProperty({ example: DELETION_RECEIVED }) message!: string;
}

export class DeletionStatusBody {
  @ApiProperty({ type: 'integer' }) deletion_id!: number;
  @ApiProperty({ enum: ['SUCCESS', 'PENDING', 'FAILURE'] }) status!: DeletionStatus;
  @ApiProperty() message!: string;
}
