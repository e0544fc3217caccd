/* The next runs of a backup policy's schedule, previewed as the user
 * types it, in the create and edit workflows (which Horizon may load in a
 * modal at any time: the handlers are delegated from the document).
 * The view at data-preview-url asks the API's schedule preview as the
 * user; an invalid schedule is shown as an error of its field.  Without
 * JavaScript the same check happens when the form is submitted. */
(function ($) {
  'use strict';

  var timer = null;
  var sequence = 0;

  function field(form, name) {
    return form.find('[name="' + name + '"]');
  }

  function clearError(input) {
    var group = input.closest('.form-group');
    group.removeClass('has-error');
    group.find('.dbaas-preview-error').remove();
  }

  function showError(input, message) {
    var group = input.closest('.form-group');
    clearError(input);
    group.addClass('has-error');
    $('<span class="help-block dbaas-preview-error"></span>')
      .text(message).insertAfter(input);
  }

  function render(preview, runs, example) {
    var body = preview.find('tbody').empty();
    $.each(runs, function (index, run) {
      var browser = new Date(run.utc).toLocaleString();
      $('<tr></tr>')
        .append($('<td></td>').text(run.policy))
        .append($('<td></td>').text(browser))
        .appendTo(body);
    });
    preview.find('.dbaas-preview-example').toggle(Boolean(example));
  }

  function update(form) {
    var schedule = field(form, 'schedule');
    var timezone = field(form, 'timezone');
    var preview = form.find('.dbaas-schedule-preview');
    var url = schedule.data('preview-url');
    if (!url || !preview.length) {
      return;
    }
    var mine = ++sequence;
    $.ajax({
      url: url,
      dataType: 'json',
      data: {
        schedule: schedule.val(),
        schedule_type: field(form, 'schedule_type').val(),
        timezone: timezone.val()
      }
    }).done(function (data) {
      if (mine !== sequence) { return; }
      clearError(schedule);
      clearError(timezone);
      render(preview, data.runs || [], data.example);
    }).fail(function (xhr) {
      if (mine !== sequence) { return; }
      var data = xhr.responseJSON || {};
      clearError(schedule);
      clearError(timezone);
      render(preview, [], false);
      if (data.error) {
        showError(data.field === 'timezone' ? timezone : schedule,
                  data.error);
      }
    });
  }

  var selector = '[name="schedule"], [name="schedule_type"], ' +
      '[name="timezone"]';
  $(document).on('input change', selector, function () {
    var form = $(this).closest('form');
    window.clearTimeout(timer);
    timer = window.setTimeout(function () { update(form); }, 300);
  });
  // A form opened with a schedule already in it (edit) shows its runs.
  $(document).on('shown.bs.modal', '.modal', function () {
    var form = $(this).find('form');
    if (field(form, 'schedule').val()) { update(form); }
  });
  $(function () {
    var form = $('[name="schedule"]').closest('form');
    if (form.length && field(form, 'schedule').val()) { update(form); }
  });
}(jQuery));
