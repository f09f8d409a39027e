-- The schema every database has after its migrations (sqlite_master, ordered by type and name).
-- Written from the code before the layered move (issue 11); tests/test_db.py checks a new database against it.
-- A new migration changes this file on purpose: regenerate it with  python tests/test_db.py --write-schema

-- index adjudications_item
CREATE INDEX adjudications_item ON adjudications(item_id, id);

-- index answers_campaign_user
CREATE INDEX answers_campaign_user ON answers(campaign_id, user_id);

-- index answers_item
CREATE INDEX answers_item ON answers(item_id, user_id, family, gold, id);

-- index audit_log_action
CREATE INDEX audit_log_action ON audit_log(action, target);

-- index exam_settlements_answer
CREATE INDEX exam_settlements_answer ON exam_settlements(exam, model, question, id);

-- index item_assignments_queue
CREATE INDEX item_assignments_queue ON item_assignments(campaign_id, user_id, family, position, item_id);

-- index responses_kb
CREATE INDEX responses_kb ON responses(kb_id);

-- index scores_metric_scorer
CREATE INDEX scores_metric_scorer ON scores(metric, scorer);

-- index sessions_user
CREATE INDEX sessions_user ON sessions(user_id);

-- index threshold_sets_one_active
CREATE UNIQUE INDEX threshold_sets_one_active ON threshold_sets(active) WHERE active = 1;

-- table _migrations
CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL);

-- table adjudications
CREATE TABLE adjudications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        item_id INTEGER NOT NULL REFERENCES campaign_items(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        tier INTEGER NOT NULL CHECK (tier IN (0, 1, 2)),
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
        supersedes INTEGER REFERENCES adjudications(id),
        created_at REAL NOT NULL
    , fully_shown INTEGER CHECK (fully_shown IN (0, 1)));

-- table answers
CREATE TABLE answers (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        family TEXT NOT NULL CHECK (family IN ('tier', 'task')),
        gold INTEGER NOT NULL DEFAULT 0 CHECK (gold IN (0, 1)),
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id),
        question TEXT NOT NULL,
        value,
        status TEXT NOT NULL CHECK (status IN ('submitted', 'skipped', 'flagged')),
        note TEXT,
        mode TEXT CHECK (mode IN ('qualification', 'hidden')),
        attempt INTEGER,
        layout TEXT,
        client_token TEXT NOT NULL,
        supersedes INTEGER REFERENCES answers(id),
        guideline_version INTEGER,
        created_at REAL NOT NULL, fully_shown INTEGER CHECK (fully_shown IN (0, 1)),
        UNIQUE (user_id, family, gold, client_token),
        CHECK ((gold = 1) = (mode IS NOT NULL)),
        CHECK (mode IS NULL OR (mode = 'qualification') = (attempt IS NOT NULL)),
        CHECK (family = 'task' OR (question = 'tier' AND (value IS NULL OR value IN (0, 1, 2)))),
        CHECK (status != 'skipped' OR value IS NULL)
    );

-- table app_secret
CREATE TABLE app_secret (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        secret TEXT NOT NULL,
        created_at TEXT NOT NULL
    );

-- table audit_log
CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        at TEXT NOT NULL,
        actor TEXT NOT NULL,
        action TEXT NOT NULL,
        target TEXT,
        detail TEXT
    );

-- table calibration_rounds
CREATE TABLE calibration_rounds (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        round INTEGER NOT NULL CHECK (round >= 1),
        metric TEXT NOT NULL,
        aspect_type TEXT NOT NULL,
        n_graded INTEGER NOT NULL,
        low REAL,
        high REAL,
        low_ci_lo REAL,
        low_ci_hi REAL,
        high_ci_lo REAL,
        high_ci_hi REAL,
        items_added INTEGER NOT NULL,
        stop TEXT CHECK (stop IS NULL OR stop IN ('target', 'budget', 'pool')),
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (campaign_id, round, metric, aspect_type)
    );

-- table campaign_guidelines
CREATE TABLE campaign_guidelines (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        version INTEGER NOT NULL CHECK (version >= 1),
        text TEXT NOT NULL,
        definitions TEXT NOT NULL,
        examples TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (campaign_id, version)
    );

-- table campaign_items
CREATE TABLE campaign_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        response_id INTEGER NOT NULL REFERENCES responses(id),
        strata TEXT NOT NULL,
        UNIQUE (campaign_id, response_id)
    );

-- table campaigns
CREATE TABLE campaigns (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        config TEXT NOT NULL,
        report TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','closed'))
    );

-- table case_questions
CREATE TABLE case_questions (
        id INTEGER PRIMARY KEY,
        case_id INTEGER NOT NULL REFERENCES cases(id),
        position INTEGER NOT NULL CHECK (position >= 1),
        question TEXT NOT NULL,
        reference TEXT NOT NULL,
        UNIQUE (case_id, position)
    );

-- table case_responses
CREATE TABLE case_responses (
        id INTEGER PRIMARY KEY,
        question_id INTEGER NOT NULL REFERENCES case_questions(id),
        model TEXT NOT NULL,
        response TEXT NOT NULL,
        UNIQUE (question_id, model)
    );

-- table cases
CREATE TABLE cases (
        id INTEGER PRIMARY KEY,
        dataset TEXT NOT NULL,
        case_key TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        UNIQUE (dataset, case_key)
    );

-- table embeddings
CREATE TABLE embeddings (
        model_id TEXT NOT NULL,
        text_hash TEXT NOT NULL,
        dim INTEGER NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model_id, text_hash)
    ) WITHOUT ROWID;

-- table exam_settlements
CREATE TABLE exam_settlements (
        id INTEGER PRIMARY KEY,
        exam TEXT NOT NULL CHECK (length(exam) > 0),
        model TEXT NOT NULL,
        question TEXT NOT NULL CHECK (length(question) > 0),
        response_sha TEXT NOT NULL,
        letters TEXT NOT NULL CHECK (letters NOT GLOB '*[^A-Z]*'),
        decided_by TEXT NOT NULL,
        decided_at TEXT NOT NULL,
        note TEXT NOT NULL DEFAULT '',
        supersedes INTEGER REFERENCES exam_settlements(id)
    );

-- table fact_claims
CREATE TABLE fact_claims (
        id INTEGER PRIMARY KEY,
        dataset TEXT NOT NULL,
        item_key TEXT NOT NULL,
        type TEXT NOT NULL,
        label TEXT NOT NULL CHECK (label IN ('support', 'refute')),
        claim TEXT NOT NULL,
        model TEXT NOT NULL,
        response TEXT NOT NULL,
        UNIQUE (dataset, model, item_key, label)
    );

-- table gold_attempts
CREATE TABLE gold_attempts (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        user_id INTEGER NOT NULL REFERENCES users(id),
        attempt INTEGER NOT NULL CHECK (attempt >= 1),
        gold_ids TEXT NOT NULL,
        pass_mark REAL NOT NULL,
        started_at REAL NOT NULL,
        PRIMARY KEY (campaign_id, user_id, attempt)
    );

-- table gold_items
CREATE TABLE gold_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        response_id INTEGER NOT NULL REFERENCES responses(id),
        expected_tier INTEGER NOT NULL CHECK (expected_tier IN (0, 1, 2)),
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (campaign_id, response_id)
    );

-- table gold_retired
CREATE TABLE gold_retired (
        gold_id INTEGER PRIMARY KEY REFERENCES gold_items(id),
        retired_by TEXT NOT NULL,
        retired_at TEXT NOT NULL
    );

-- table gold_settings
CREATE TABLE gold_settings (
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        version INTEGER NOT NULL CHECK (version >= 1),
        settings TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (campaign_id, version)
    );

-- table grades
CREATE TABLE grades (
        response_id INTEGER NOT NULL REFERENCES responses(id),
        metric TEXT NOT NULL,
        version INTEGER NOT NULL REFERENCES threshold_sets(version),
        scorer TEXT NOT NULL,
        tier INTEGER NOT NULL CHECK (tier IN (0,1,2)),
        PRIMARY KEY (version, response_id, metric)
    ) WITHOUT ROWID;

-- table guideline_acks
CREATE TABLE guideline_acks (
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL,
        version INTEGER NOT NULL,
        acknowledged_at TEXT NOT NULL,
        PRIMARY KEY (user_id, campaign_id, version),
        FOREIGN KEY (campaign_id, version) REFERENCES campaign_guidelines(campaign_id, version)
    );

-- table import_batches
CREATE TABLE import_batches (
        id INTEGER PRIMARY KEY,
        state TEXT NOT NULL CHECK (state IN ('staging', 'done')),
        started_at TEXT NOT NULL,
        finished_at TEXT,
        first_kb_id INTEGER NOT NULL,
        first_response_id INTEGER NOT NULL,
        summary TEXT
    );

-- table item_assignments
CREATE TABLE item_assignments (
        family TEXT NOT NULL CHECK (family IN ('tier', 'task')),
        item_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id),
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        position INTEGER NOT NULL,
        layout TEXT,
        PRIMARY KEY (item_id, user_id, family),
        UNIQUE (campaign_id, user_id, position),
        CHECK ((family = 'task') = (layout IS NOT NULL))
    ) WITHOUT ROWID;

-- table judge_assessments
CREATE TABLE judge_assessments (
        id INTEGER PRIMARY KEY,
        question_id INTEGER NOT NULL REFERENCES case_questions(id),
        judge TEXT NOT NULL,
        rationale TEXT NOT NULL,
        models TEXT NOT NULL,
        UNIQUE (question_id, judge)
    );

-- table judge_criterion_scores
CREATE TABLE judge_criterion_scores (
        id INTEGER PRIMARY KEY,
        assessment_id INTEGER NOT NULL REFERENCES judge_assessments(id),
        model TEXT NOT NULL,
        criterion TEXT NOT NULL,
        score REAL NOT NULL,
        UNIQUE (assessment_id, model, criterion)
    );

-- table judge_scores
CREATE TABLE judge_scores (
        assessment_id INTEGER NOT NULL REFERENCES judge_assessments(id),
        model TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (assessment_id, model)
    ) WITHOUT ROWID;

-- table kb_entries
CREATE TABLE kb_entries (
        id INTEGER PRIMARY KEY,
        disease TEXT NOT NULL,
        disease_en TEXT,
        aspect TEXT NOT NULL,
        aspect_type TEXT NOT NULL CHECK (aspect_type IN ('enumerated','declarative','numeric')),
        reference TEXT NOT NULL,
        processed TEXT NOT NULL, batch INTEGER REFERENCES import_batches(id),
        UNIQUE (disease, aspect)
    );

-- table models
CREATE TABLE models (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        backbone TEXT,
        kind TEXT NOT NULL DEFAULT 'general' CHECK (kind IN ('general','medical'))
    );

-- table responses
CREATE TABLE responses (
        id INTEGER PRIMARY KEY,
        model_id INTEGER NOT NULL REFERENCES models(id),
        kb_id INTEGER NOT NULL REFERENCES kb_entries(id),
        raw TEXT NOT NULL,
        processed TEXT NOT NULL,
        note TEXT, batch INTEGER REFERENCES import_batches(id),
        UNIQUE (model_id, kb_id)
    );

-- table scores
CREATE TABLE scores (
        response_id INTEGER NOT NULL REFERENCES responses(id),
        metric TEXT NOT NULL,
        scorer TEXT NOT NULL,
        score REAL NOT NULL,
        PRIMARY KEY (response_id, metric, scorer)
    ) WITHOUT ROWID;

-- table sessions
CREATE TABLE sessions (
        token_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id),
        created_at REAL NOT NULL,
        last_seen REAL NOT NULL,
        ended_at REAL,
        end_reason TEXT
    );

-- table task_gold_items
CREATE TABLE task_gold_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        source TEXT NOT NULL,
        payload TEXT NOT NULL,
        expected TEXT NOT NULL,
        reason TEXT NOT NULL CHECK (length(trim(reason)) > 0),
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        UNIQUE (campaign_id, source)
    );

-- table task_gold_retired
CREATE TABLE task_gold_retired (
        gold_id INTEGER PRIMARY KEY REFERENCES task_gold_items(id),
        retired_by TEXT NOT NULL,
        retired_at TEXT NOT NULL
    );

-- table task_items
CREATE TABLE task_items (
        id INTEGER PRIMARY KEY,
        campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
        source TEXT NOT NULL,
        payload TEXT NOT NULL,
        UNIQUE (campaign_id, source)
    );

-- table threshold_drafts
CREATE TABLE threshold_drafts (
        user_id INTEGER NOT NULL REFERENCES users(id),
        metric TEXT NOT NULL,
        aspect_type TEXT NOT NULL,
        low REAL NOT NULL,
        high REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (user_id, metric, aspect_type),
        CHECK (low <= high)
    );

-- table threshold_sets
CREATE TABLE threshold_sets (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        tokenizer TEXT NOT NULL,
        embedding_model TEXT NOT NULL,
        provenance TEXT NOT NULL,
        created_at TEXT NOT NULL,
        created_by TEXT NOT NULL,
        active INTEGER NOT NULL DEFAULT 0
    , state TEXT NOT NULL DEFAULT 'ready' CHECK (state IN ('building', 'grading', 'ready')));

-- table thresholds
CREATE TABLE thresholds (
        version INTEGER NOT NULL REFERENCES threshold_sets(version),
        metric TEXT NOT NULL,
        aspect_type TEXT NOT NULL,
        low REAL NOT NULL,
        high REAL NOT NULL,
        CHECK (low <= high),
        PRIMARY KEY (version, metric, aspect_type)
    ) WITHOUT ROWID;

-- table user_hints
CREATE TABLE user_hints (
        user_id INTEGER NOT NULL REFERENCES users(id),
        hint TEXT NOT NULL,
        dismissed_at TEXT NOT NULL,
        PRIMARY KEY (user_id, hint)
    );

-- table users
CREATE TABLE "users" (
        id INTEGER PRIMARY KEY,
        username TEXT NOT NULL UNIQUE COLLATE NOCASE,
        password_hash TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('annotator','researcher','admin','adjudicator')),
        active INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL
    , language TEXT CHECK (language IS NULL OR language IN ('zh-CN', 'en')));

-- trigger adjudications_no_delete
CREATE TRIGGER adjudications_no_delete BEFORE DELETE ON adjudications
        BEGIN SELECT RAISE(ABORT, 'adjudications are append-only: record a new one instead'); END;

-- trigger adjudications_no_update
CREATE TRIGGER adjudications_no_update BEFORE UPDATE ON adjudications
        BEGIN SELECT RAISE(ABORT, 'adjudications are append-only: record a new one instead'); END;

-- trigger answers_item_exists
CREATE TRIGGER answers_item_exists BEFORE INSERT ON answers
        WHEN NOT CASE
            WHEN NEW.gold = 0 AND NEW.family IN ('tier', 'task') THEN EXISTS (SELECT 1 FROM item_assignments a
                WHERE a.item_id = NEW.item_id AND a.user_id = NEW.user_id AND a.family = NEW.family
                AND a.campaign_id = NEW.campaign_id)
            WHEN NEW.family = 'tier' AND NEW.gold = 1 THEN EXISTS (SELECT 1 FROM gold_items g
                WHERE g.id = NEW.item_id AND g.campaign_id = NEW.campaign_id)
            WHEN NEW.family = 'task' AND NEW.gold = 1 THEN EXISTS (SELECT 1 FROM task_gold_items g
                WHERE g.id = NEW.item_id AND g.campaign_id = NEW.campaign_id)
            ELSE 1
        END
        BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: an answer names an item that is not assigned'); END;

-- trigger answers_no_delete
CREATE TRIGGER answers_no_delete BEFORE DELETE ON answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;

-- trigger answers_no_update
CREATE TRIGGER answers_no_update BEFORE UPDATE ON answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;

-- trigger assignments_insert
CREATE TRIGGER assignments_insert INSTEAD OF INSERT ON assignments BEGIN
        INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, layout)
        VALUES ('tier', NEW.item_id, NEW.user_id, NEW.campaign_id, NEW.position, NULL); END;

-- trigger assignments_no_delete
CREATE TRIGGER assignments_no_delete INSTEAD OF DELETE ON assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;

-- trigger assignments_no_update
CREATE TRIGGER assignments_no_update INSTEAD OF UPDATE ON assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;

-- trigger audit_log_no_delete
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- trigger audit_log_no_update
CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log
        BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END;

-- trigger campaign_guidelines_no_delete
CREATE TRIGGER campaign_guidelines_no_delete BEFORE DELETE ON campaign_guidelines
        BEGIN SELECT RAISE(ABORT, 'guideline versions are append-only'); END;

-- trigger campaign_guidelines_no_update
CREATE TRIGGER campaign_guidelines_no_update BEFORE UPDATE ON campaign_guidelines
        BEGIN SELECT RAISE(ABORT, 'guideline versions are append-only'); END;

-- trigger campaign_items_no_delete
CREATE TRIGGER campaign_items_no_delete BEFORE DELETE ON campaign_items
        BEGIN SELECT RAISE(ABORT, 'items are fixed once written: answers and assignments name them'); END;

-- trigger campaign_items_no_update
CREATE TRIGGER campaign_items_no_update BEFORE UPDATE ON campaign_items
        BEGIN SELECT RAISE(ABORT, 'items are fixed once written: answers and assignments name them'); END;

-- trigger exam_settlements_no_delete
CREATE TRIGGER exam_settlements_no_delete BEFORE DELETE ON exam_settlements
        BEGIN SELECT RAISE(ABORT, 'exam settlements are append-only: settle again instead'); END;

-- trigger exam_settlements_no_update
CREATE TRIGGER exam_settlements_no_update BEFORE UPDATE ON exam_settlements
        BEGIN SELECT RAISE(ABORT, 'exam settlements are append-only: settle again instead'); END;

-- trigger gold_answers_insert
CREATE TRIGGER gold_answers_insert INSTEAD OF INSERT ON gold_answers BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note, mode,
                             attempt, client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM gold_items WHERE id = NEW.gold_id), 'tier', 1, NEW.gold_id,
                NEW.user_id, 'tier', CASE WHEN coalesce(NEW.skipped, 0) THEN NULL ELSE NEW.tier END, CASE WHEN coalesce(NEW.flagged, 0) THEN 'flagged' WHEN coalesce(NEW.skipped, 0) OR NEW.tier IS NULL THEN 'skipped' ELSE 'submitted' END, NEW.note,
                NEW.mode, NEW.attempt, NEW.client_token, NEW.supersedes, NEW.guideline_version, NEW.created_at); END;

-- trigger gold_answers_no_delete
CREATE TRIGGER gold_answers_no_delete INSTEAD OF DELETE ON gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;

-- trigger gold_answers_no_update
CREATE TRIGGER gold_answers_no_update INSTEAD OF UPDATE ON gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;

-- trigger gold_attempts_no_update
CREATE TRIGGER gold_attempts_no_update BEFORE UPDATE ON gold_attempts
        BEGIN SELECT RAISE(ABORT, 'qualification attempts are append-only'); END;

-- trigger gold_items_no_delete
CREATE TRIGGER gold_items_no_delete BEFORE DELETE ON gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;

-- trigger gold_items_no_update
CREATE TRIGGER gold_items_no_update BEFORE UPDATE ON gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;

-- trigger gold_retired_no_delete
CREATE TRIGGER gold_retired_no_delete BEFORE DELETE ON gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;

-- trigger gold_retired_no_update
CREATE TRIGGER gold_retired_no_update BEFORE UPDATE ON gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;

-- trigger gold_settings_no_update
CREATE TRIGGER gold_settings_no_update BEFORE UPDATE ON gold_settings
        BEGIN SELECT RAISE(ABORT, 'gold settings are append-only: save a new version'); END;

-- trigger grade_annotations_insert
CREATE TRIGGER grade_annotations_insert INSTEAD OF INSERT ON grade_annotations BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note,
                             client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM campaign_items WHERE id = NEW.item_id), 'tier', 0, NEW.item_id,
                NEW.user_id, 'tier', CASE WHEN coalesce(NEW.skipped, 0) THEN NULL ELSE NEW.tier END, CASE WHEN coalesce(NEW.flagged, 0) THEN 'flagged' WHEN coalesce(NEW.skipped, 0) OR NEW.tier IS NULL THEN 'skipped' ELSE 'submitted' END, NEW.note,
                NEW.client_token, NEW.supersedes, NEW.guideline_version, NEW.created_at); END;

-- trigger grade_annotations_no_delete
CREATE TRIGGER grade_annotations_no_delete INSTEAD OF DELETE ON grade_annotations
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;

-- trigger grade_annotations_no_update
CREATE TRIGGER grade_annotations_no_update INSTEAD OF UPDATE ON grade_annotations
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;

-- trigger item_assignments_item_exists
CREATE TRIGGER item_assignments_item_exists BEFORE INSERT ON item_assignments
        WHEN NOT CASE NEW.family
            WHEN 'tier' THEN EXISTS (SELECT 1 FROM campaign_items i
                                     WHERE i.id = NEW.item_id AND i.campaign_id = NEW.campaign_id)
            WHEN 'task' THEN EXISTS (SELECT 1 FROM task_items i
                                     WHERE i.id = NEW.item_id AND i.campaign_id = NEW.campaign_id)
            ELSE 1
        END
        BEGIN SELECT RAISE(ABORT, 'FOREIGN KEY constraint failed: an assignment names no item of its campaign'); END;

-- trigger item_assignments_no_delete
CREATE TRIGGER item_assignments_no_delete BEFORE DELETE ON item_assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;

-- trigger item_assignments_no_update
CREATE TRIGGER item_assignments_no_update BEFORE UPDATE ON item_assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;

-- trigger task_answers_insert
CREATE TRIGGER task_answers_insert INSTEAD OF INSERT ON task_answers BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note,
                             client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM task_items WHERE id = NEW.item_id), 'task', 0, NEW.item_id,
                NEW.user_id, NEW.question, CASE WHEN NEW.question = '#flag' OR coalesce(NEW.skipped, 0) THEN NULL ELSE NEW.value END, CASE WHEN NEW.question = '#flag' THEN 'flagged' WHEN coalesce(NEW.skipped, 0) THEN 'skipped' ELSE 'submitted' END,
                CASE WHEN NEW.question = '#flag' THEN NEW.value END, NEW.client_token, NEW.supersedes, NEW.guideline_version,
                NEW.created_at); END;

-- trigger task_answers_no_delete
CREATE TRIGGER task_answers_no_delete INSTEAD OF DELETE ON task_answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;

-- trigger task_answers_no_update
CREATE TRIGGER task_answers_no_update INSTEAD OF UPDATE ON task_answers
        BEGIN SELECT RAISE(ABORT, 'annotations are append-only'); END;

-- trigger task_assignments_insert
CREATE TRIGGER task_assignments_insert INSTEAD OF INSERT ON task_assignments BEGIN
        INSERT INTO item_assignments (family, item_id, user_id, campaign_id, position, layout)
        VALUES ('task', NEW.item_id, NEW.user_id, NEW.campaign_id, NEW.position, NEW.layout); END;

-- trigger task_assignments_no_delete
CREATE TRIGGER task_assignments_no_delete INSTEAD OF DELETE ON task_assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;

-- trigger task_assignments_no_update
CREATE TRIGGER task_assignments_no_update INSTEAD OF UPDATE ON task_assignments
        BEGIN SELECT RAISE(ABORT, 'assignments are fixed when the campaign is created'); END;

-- trigger task_gold_answers_insert
CREATE TRIGGER task_gold_answers_insert INSTEAD OF INSERT ON task_gold_answers BEGIN
        INSERT INTO answers (id, campaign_id, family, gold, item_id, user_id, question, value, status, note, mode,
                             attempt, layout, client_token, supersedes, guideline_version, created_at)
        VALUES (NEW.id, (SELECT campaign_id FROM task_gold_items WHERE id = NEW.gold_id), 'task', 1, NEW.gold_id,
                NEW.user_id, NEW.question, CASE WHEN NEW.question = '#flag' OR coalesce(NEW.skipped, 0) THEN NULL ELSE NEW.value END, CASE WHEN NEW.question = '#flag' THEN 'flagged' WHEN coalesce(NEW.skipped, 0) THEN 'skipped' ELSE 'submitted' END,
                CASE WHEN NEW.question = '#flag' THEN NEW.value END, NEW.mode, NEW.attempt, NEW.layout, NEW.client_token, NEW.supersedes,
                NEW.guideline_version, NEW.created_at); END;

-- trigger task_gold_answers_no_delete
CREATE TRIGGER task_gold_answers_no_delete INSTEAD OF DELETE ON task_gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;

-- trigger task_gold_answers_no_update
CREATE TRIGGER task_gold_answers_no_update INSTEAD OF UPDATE ON task_gold_answers
        BEGIN SELECT RAISE(ABORT, 'gold answers are append-only'); END;

-- trigger task_gold_items_no_delete
CREATE TRIGGER task_gold_items_no_delete BEFORE DELETE ON task_gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;

-- trigger task_gold_items_no_update
CREATE TRIGGER task_gold_items_no_update BEFORE UPDATE ON task_gold_items
        BEGIN SELECT RAISE(ABORT, 'gold items are append-only: retire one instead'); END;

-- trigger task_gold_retired_no_delete
CREATE TRIGGER task_gold_retired_no_delete BEFORE DELETE ON task_gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;

-- trigger task_gold_retired_no_update
CREATE TRIGGER task_gold_retired_no_update BEFORE UPDATE ON task_gold_retired
        BEGIN SELECT RAISE(ABORT, 'retirements are append-only'); END;

-- trigger task_items_no_delete
CREATE TRIGGER task_items_no_delete BEFORE DELETE ON task_items
        BEGIN SELECT RAISE(ABORT, 'items are fixed once written: answers and assignments name them'); END;

-- trigger task_items_no_update
CREATE TRIGGER task_items_no_update BEFORE UPDATE ON task_items
        BEGIN SELECT RAISE(ABORT, 'items are fixed once written: answers and assignments name them'); END;

-- view assignments
CREATE VIEW assignments AS
        SELECT item_id, user_id, campaign_id, position FROM item_assignments WHERE likely(family = 'tier');

-- view gold_answers
CREATE VIEW gold_answers AS
        SELECT id, item_id AS gold_id, user_id, value AS tier, value IS NULL AS skipped, status = 'flagged' AS flagged,
               note, mode, attempt, client_token, supersedes, created_at, guideline_version
        FROM answers WHERE likely(family = 'tier') AND likely(gold = 1);

-- view grade_annotations
CREATE VIEW grade_annotations AS
        SELECT id, item_id, user_id, value AS tier, value IS NULL AS skipped, status = 'flagged' AS flagged, note,
               client_token, supersedes, created_at, guideline_version
        FROM answers WHERE likely(family = 'tier') AND likely(gold = 0);

-- view items
CREATE VIEW items (family, gold, id, campaign_id, response_id, strata, source, payload, expected, reason,
                       created_by, created_at, retired_by, retired_at) AS
        SELECT 'tier', 0, ci.id, ci.campaign_id, ci.response_id, ci.strata, NULL, NULL, NULL, NULL, NULL, NULL,
               NULL, NULL FROM campaign_items ci
        UNION ALL
        SELECT 'task', 0, ti.id, ti.campaign_id, NULL, NULL, ti.source, ti.payload, NULL, NULL, NULL, NULL, NULL,
               NULL FROM task_items ti
        UNION ALL
        SELECT 'tier', 1, gi.id, gi.campaign_id, gi.response_id, NULL, NULL, NULL, +gi.expected_tier, gi.reason,
               gi.created_by, gi.created_at, gr.retired_by, gr.retired_at
        FROM gold_items gi LEFT JOIN gold_retired gr ON gr.gold_id = gi.id
        UNION ALL
        SELECT 'task', 1, tg.id, tg.campaign_id, NULL, NULL, tg.source, tg.payload, +tg.expected, tg.reason,
               tg.created_by, tg.created_at, tr.retired_by, tr.retired_at
        FROM task_gold_items tg LEFT JOIN task_gold_retired tr ON tr.gold_id = tg.id;

-- view latest_grade_annotations
CREATE VIEW latest_grade_annotations AS
        SELECT g.* FROM grade_annotations g
        WHERE g.id = (SELECT max(a.id) FROM answers a WHERE a.family = 'tier' AND a.gold = 0
                      AND a.item_id = g.item_id AND a.user_id = g.user_id);

-- view task_answers
CREATE VIEW task_answers AS
        SELECT id, item_id, user_id, question,
               CASE WHEN status = 'flagged' THEN note ELSE CAST(value AS TEXT) END AS value,
               status = 'skipped' AS skipped, client_token, supersedes, created_at, guideline_version
        FROM answers WHERE likely(family = 'task') AND likely(gold = 0);

-- view task_assignments
CREATE VIEW task_assignments AS
        SELECT item_id, user_id, campaign_id, position, layout FROM item_assignments WHERE likely(family = 'task');

-- view task_gold_answers
CREATE VIEW task_gold_answers AS
        SELECT id, item_id AS gold_id, user_id, question,
               CASE WHEN status = 'flagged' THEN note ELSE CAST(value AS TEXT) END AS value,
               status = 'skipped' AS skipped, mode, attempt, layout, client_token, supersedes, guideline_version,
               created_at
        FROM answers WHERE likely(family = 'task') AND likely(gold = 1);

