import { Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccountsRepository } from './accounts.repository';

/** Accounts and their API keys, as the CLI writes them and authentication reads them. */
@Module({
  providers: [
    {
      provide: AccountsRepository,
      inject: [getDataSourceToken()],
      useFactory: (db: DataSource) => new AccountsRepository(db),
    },
  ],
  exports: [AccountsRepository],
})
export class AccountsModule {}
