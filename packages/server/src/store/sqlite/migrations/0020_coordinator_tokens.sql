-- Which tokens each coordinator accepts, as short fingerprints (`admin:…,enrollment:…,readonly:…`), so
-- that a coordinator started with other tokens than the rest of the store's is noticed and said.
ALTER TABLE coordinators ADD COLUMN tokens TEXT;
